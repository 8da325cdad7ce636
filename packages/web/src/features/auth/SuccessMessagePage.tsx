import { MESSAGES } from '@lamina/domain';
import { NonIdealState } from '@blueprintjs/core';
import { usePageTitle } from '../../components/usePageTitle';

/** /successMessage: after an image is marked as scored, also when embedded (doc 1 §2.1). */
export function SuccessMessagePage() {
  usePageTitle('Scored');
  return (
    <NonIdealState
      className="lamina-status-page"
      icon="tick-circle"
      title={MESSAGES.imageMarkedScored}
      description={MESSAGES.returnToDashboard}
    />
  );
}
