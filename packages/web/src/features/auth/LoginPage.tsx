import { AnchorButton, Button, Callout, Card, Classes, FormGroup, H2, InputGroup } from '@blueprintjs/core';
import { OIDC_LOGIN_PATH } from '@lamina/domain';
import { useEffect, useState, type SubmitEvent } from 'react';
import { useSearchParams } from 'react-router';
import { errorMessage } from '../../api/ApiError';
import { useLogin, useSessionState } from '../../api/auth';
import { useConfig } from '../../api/config';
import { fullPageNavigate, fullPageReplace } from '../../lib/browser';
import { changePasswordUrlFor, DEFAULT_AFTER_LOGIN, safeRedirect } from '../../lib/safeRedirect';
import { usePageTitle } from '../../components/usePageTitle';

/**
 * /login (doc 1 §2.1): username and password; follows a safe `?redirect=` with a full page load,
 * through /changePassword when the account still has a one-time password. With OpenID Connect
 * configured, a 'Log in with {name}' button starts the single sign-on (a page load of the server's
 * login route, carrying the redirect); with LOCAL_LOGIN=off it is the only way in.
 */
export function LoginPage() {
  usePageTitle('Log in');
  const [params] = useSearchParams();
  const redirect = safeRedirect(params.get('redirect'));
  // Already logged in? Asked without the user's info, whose 401 the browser would log (issue 20).
  const session = useSessionState();
  const config = useConfig();
  const login = useLogin();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const alreadyLoggedIn = session.data?.authenticated === true;

  useEffect(() => {
    if (alreadyLoggedIn) fullPageReplace(DEFAULT_AFTER_LOGIN);
  }, [alreadyLoggedIn]);

  function handleSubmit(event: SubmitEvent<HTMLFormElement>) {
    event.preventDefault();
    if (login.isPending || username.trim() === '' || password === '') return;
    login.mutate(
      { username: username.trim(), password },
      {
        // A one-time password is changed first; the change page then goes on to the redirect.
        onSuccess: (response) =>
          fullPageNavigate(response.user.mustChangePassword ? changePasswordUrlFor(redirect) : redirect),
      },
    );
  }

  const ssoLoginUrl = config.data?.ssoLoginUrl ?? null;
  const oidcName = config.data?.oidcName ?? null;
  const localLogin = config.data?.localLogin ?? true;
  const submitting = login.isPending || login.isSuccess;
  const oidcButton = oidcName !== null && (
    <AnchorButton
      href={`${OIDC_LOGIN_PATH}?redirect=${encodeURIComponent(redirect)}`}
      icon="log-in"
      size="large"
      fill
      intent={localLogin ? 'none' : 'primary'}
      variant={localLogin ? 'outlined' : 'solid'}
      text={`Log in with ${oidcName}`}
    />
  );

  if (!localLogin) {
    return (
      <div className="lamina-login">
        <Card className="lamina-login-card" elevation={2}>
          <H2 className="lamina-login-title">Log in to Lamina</H2>
          {oidcButton}
        </Card>
      </div>
    );
  }

  return (
    <div className="lamina-login">
      <Card className="lamina-login-card" elevation={2}>
        <H2 className="lamina-login-title">Log in to Lamina</H2>
        <form onSubmit={handleSubmit} aria-label="Log in" noValidate={false}>
          <FormGroup label="Username" labelFor="login-username">
            <InputGroup
              id="login-username"
              name="username"
              autoComplete="username"
              autoFocus
              required
              size="large"
              value={username}
              onValueChange={setUsername}
              disabled={submitting}
            />
          </FormGroup>
          <FormGroup label="Password" labelFor="login-password">
            <InputGroup
              id="login-password"
              name="password"
              type="password"
              autoComplete="current-password"
              required
              size="large"
              value={password}
              onValueChange={setPassword}
              disabled={submitting}
            />
          </FormGroup>
          {login.isError && (
            <Callout intent="danger" className="lamina-login-error" role="alert">
              {errorMessage(login.error)}
            </Callout>
          )}
          <Button type="submit" intent="primary" size="large" fill text="Log in" disabled={submitting} />
        </form>
        {oidcButton && (
          <div className="lamina-login-sso">
            <span className={Classes.TEXT_MUTED}>or</span>
            {oidcButton}
          </div>
        )}
        {!oidcButton && ssoLoginUrl !== null && (
          <div className="lamina-login-sso">
            <span className={Classes.TEXT_MUTED}>or</span>
            <a href={ssoLoginUrl} className={`${Classes.BUTTON} ${Classes.OUTLINED} ${Classes.FILL}`}>
              Log in with single sign-on
            </a>
          </div>
        )}
      </Card>
    </div>
  );
}
