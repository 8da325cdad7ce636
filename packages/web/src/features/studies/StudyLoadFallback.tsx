import { Callout } from '@blueprintjs/core';
import { STUDY_MESSAGES, type StudyView } from '@lamina/domain';
import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { errorMessage, isApiError } from '../../api/ApiError';
import { PageSpinner } from '../../components/PageSpinner';

/**
 * What a study page shows instead of its content while the study is not there: 'Study not found'
 * as a warning (doc 1 §2.5, a bad id or a study the user may not see), the error in a red callout,
 * or a spinner while it loads. Null once the study is loaded.
 */
export function studyLoadFallback(studyId: number | null, study: UseQueryResult<StudyView>): ReactNode | null {
  if (studyId === null || isApiError(study.error, 404))
    return <Callout intent="warning" title={STUDY_MESSAGES.studyNotFound} />;
  if (study.isError) {
    return (
      <Callout intent="danger" title="Error" role="alert">
        {errorMessage(study.error)}
      </Callout>
    );
  }
  if (study.isPending) return <PageSpinner />;
  return null;
}
