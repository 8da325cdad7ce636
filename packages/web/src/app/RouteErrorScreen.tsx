import { Button, Callout } from '@blueprintjs/core';
import { isRouteErrorResponse, useRouteError } from 'react-router';
import { errorMessage } from '../api/ApiError';
import { reloadPage } from '../lib/browser';

/** Shown when a page throws while rendering or its code fails to load. */
export function RouteErrorScreen() {
  const error = useRouteError();
  const message = isRouteErrorResponse(error) ? `${error.status} ${error.statusText}` : errorMessage(error);
  return (
    <div className="lamina-error-screen">
      <Callout intent="danger" title="Something went wrong" role="alert">
        <p className="lamina-error-text">{message}</p>
        <Button text="Reload" icon="refresh" onClick={() => reloadPage()} />
      </Callout>
    </div>
  );
}
