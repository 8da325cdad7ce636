import { MESSAGES } from '@lamina/domain';
import { Classes, NonIdealState } from '@blueprintjs/core';
import { Link } from 'react-router';
import { usePageTitle } from './usePageTitle';

export function NotFoundPage() {
  usePageTitle(MESSAGES.pageNotFound);
  return (
    <NonIdealState
      className="lamina-not-found"
      icon="search"
      title={MESSAGES.pageNotFound}
      description="The address does not match any page of Lamina."
      action={
        <Link to="/studies" className={`${Classes.BUTTON} ${Classes.INTENT_PRIMARY}`}>
          Go to Studies
        </Link>
      }
    />
  );
}
