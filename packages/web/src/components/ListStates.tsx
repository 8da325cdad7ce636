import { Callout, NonIdealState, Spinner, type IconName } from '@blueprintjs/core';
import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { errorMessage } from '../api/ApiError';

interface ListStatesProps<T> {
  list: UseQueryResult<T[]>;
  /** The spinner's accessible name while the list loads. */
  loadingLabel: string;
  /** What an empty list shows. */
  empty: { icon: IconName; title: string };
  children: (rows: T[]) => ReactNode;
}

/** A list fetched whole: a spinner while it loads, the error, the empty state, or its rows. */
export function ListStates<T>({ list, loadingLabel, empty, children }: ListStatesProps<T>) {
  if (list.isPending) return <Spinner size={30} aria-label={loadingLabel} />;
  if (list.isError) {
    return (
      <Callout intent="danger" title="Error" role="alert">
        {errorMessage(list.error)}
      </Callout>
    );
  }
  if (list.data.length === 0)
    return <NonIdealState icon={empty.icon} title={empty.title} className="lamina-table-state" />;
  return <>{children(list.data)}</>;
}
