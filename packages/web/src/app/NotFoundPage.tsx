import { Classes, NonIdealState } from '@blueprintjs/core';
import { Link } from 'react-router';
import { usePageTitle } from '../components/usePageTitle';
import { WEB_MESSAGES } from './needsDomain';

export function NotFoundPage() {
  usePageTitle(WEB_MESSAGES.pageNotFound);
  return (
    <NonIdealState
      className="lamina-not-found"
      icon="search"
      title={WEB_MESSAGES.pageNotFound}
      description="The address does not match any page of Lamina."
      action={
        <Link to="/studies" className={`${Classes.BUTTON} ${Classes.INTENT_PRIMARY}`}>
          Go to Studies
        </Link>
      }
    />
  );
}
