import { Button, Callout } from '@blueprintjs/core';
import { MESSAGES } from '@lamina/domain';
import { reloadPage } from '../lib/browser';

interface ConfigErrorScreenProps {
  /** `config`: GET /api/config failed (danger). `user`: users/info failed with other than 401 (warning). */
  kind: 'config' | 'user';
  /** The failure's message; for a configuration error the spec's 'Unable to connect to server' is shown. */
  message?: string;
}

/** The config/user error screen of doc 1 §2.3. */
export function ConfigErrorScreen({ kind, message }: ConfigErrorScreenProps) {
  const isConfig = kind === 'config';
  const text = isConfig ? MESSAGES.unableToConnect : (message ?? MESSAGES.unableToConnect);
  return (
    <div className={isConfig ? 'lamina-error-screen lamina-error-screen-full' : 'lamina-error-screen'}>
      <Callout intent={isConfig ? 'danger' : 'warning'} icon={isConfig ? 'error' : 'warning-sign'} role="alert">
        <p className="lamina-error-text">{text}</p>
        {isConfig && message !== undefined && message !== text && <p className="lamina-error-detail">{message}</p>}
        <Button text="Try again" icon="refresh" onClick={() => reloadPage()} />
      </Callout>
    </div>
  );
}
