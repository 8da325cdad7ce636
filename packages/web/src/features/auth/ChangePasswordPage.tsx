import { Button, Callout, Card, FormGroup, H2, InputGroup } from '@blueprintjs/core';
import { MESSAGES, PASSWORD_RULES, passwordRuleErrors } from '@lamina/domain';
import { useId, useState, type SubmitEvent } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { errorMessage } from '../../api/ApiError';
import { useChangePassword, useLogout } from '../../api/auth';
import { useUserInfo } from '../../api/users';
import { afterPasswordChange } from '../../app/safeRedirect';
import { showToast } from '../../components/appToaster';
import { usePageTitle } from '../../components/usePageTitle';

const PASSWORD_RULES_HINT = `At least ${PASSWORD_RULES.minLength} characters, different from the current password, and not containing your username.`;

/**
 * /changePassword (not in the spec): the way out of a one-time password, and open to any user from
 * the user menu. The domain's password rules are checked as the user types, with the same
 * messages the server gives; on success the page goes to the safe `?redirect=` path, else `/`.
 */
export function ChangePasswordPage() {
  usePageTitle('Change password');
  const ids = { current: useId(), next: useId(), confirm: useId() };
  const [params] = useSearchParams();
  const target = afterPasswordChange(params.get('redirect'));
  const navigate = useNavigate();
  const user = useUserInfo().data;
  const change = useChangePassword();
  const logout = useLogout();
  const [currentPassword, setCurrentPassword] = useState('');
  const [newPassword, setNewPassword] = useState('');
  const [confirmation, setConfirmation] = useState('');
  const [currentTouched, setCurrentTouched] = useState(false);

  const forced = user?.mustChangePassword === true;
  const ruleErrors = passwordRuleErrors({ newPassword, currentPassword, username: user?.username ?? '' });
  const currentError = currentTouched && currentPassword === '' ? MESSAGES.currentPasswordRequired : null;
  const confirmError = confirmation !== '' && confirmation !== newPassword ? MESSAGES.passwordsDoNotMatch : null;
  const valid = currentPassword !== '' && ruleErrors.length === 0 && confirmation === newPassword;
  const submitting = change.isPending || change.isSuccess;

  function handleSubmit(event: SubmitEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!valid || submitting) return;
    change.mutate(
      { currentPassword, newPassword },
      {
        onSuccess: (response) => {
          void showToast(response.message);
          void navigate(target, { replace: true });
        },
      },
    );
  }

  function handleCancel() {
    void navigate(target);
  }

  function handleLogout() {
    logout.mutate();
  }

  return (
    <div className="lamina-login">
      <Card className="lamina-login-card" elevation={2}>
        <H2 className="lamina-login-title">Change password</H2>
        {forced && (
          <Callout intent="warning" icon="key" className="lamina-login-error" title={MESSAGES.passwordChangeRequired}>
            Your account has a one-time password. Choose your own password before you continue.
          </Callout>
        )}
        <form onSubmit={handleSubmit} aria-label="Change password">
          {/* For password managers: the account the new password belongs to. */}
          <input type="text" name="username" autoComplete="username" value={user?.username ?? ''} readOnly hidden />
          <FormGroup
            label="Current password"
            labelFor={ids.current}
            intent={currentError ? 'danger' : 'none'}
            helperText={currentError}
          >
            <InputGroup
              id={ids.current}
              name="currentPassword"
              type="password"
              autoComplete="current-password"
              autoFocus
              size="large"
              value={currentPassword}
              onValueChange={setCurrentPassword}
              onBlur={() => setCurrentTouched(true)}
              disabled={submitting}
            />
          </FormGroup>
          <FormGroup
            label="New password"
            labelFor={ids.next}
            intent={newPassword !== '' && ruleErrors.length > 0 ? 'danger' : 'none'}
            helperText={
              ruleErrors.length === 0 || newPassword === '' ? PASSWORD_RULES_HINT : <RuleErrors errors={ruleErrors} />
            }
          >
            <InputGroup
              id={ids.next}
              name="newPassword"
              type="password"
              autoComplete="new-password"
              size="large"
              value={newPassword}
              onValueChange={setNewPassword}
              disabled={submitting}
            />
          </FormGroup>
          <FormGroup
            label="Confirm new password"
            labelFor={ids.confirm}
            intent={confirmError ? 'danger' : 'none'}
            helperText={confirmError}
          >
            <InputGroup
              id={ids.confirm}
              name="confirmPassword"
              type="password"
              autoComplete="new-password"
              size="large"
              value={confirmation}
              onValueChange={setConfirmation}
              disabled={submitting}
            />
          </FormGroup>
          {change.isError && (
            <Callout intent="danger" className="lamina-login-error" role="alert">
              {errorMessage(change.error)}
            </Callout>
          )}
          <Button
            type="submit"
            intent="primary"
            size="large"
            fill
            text="Change password"
            disabled={!valid || submitting}
            loading={change.isPending}
          />
        </form>
        <div className="lamina-login-sso">
          {forced ? (
            <Button variant="minimal" icon="log-out" text="Logout" onClick={handleLogout} disabled={logout.isPending} />
          ) : (
            <Button variant="minimal" text="Cancel" onClick={handleCancel} disabled={submitting} />
          )}
        </div>
      </Card>
    </div>
  );
}

/** Every rule the new password breaks, one per line, as the server would word the first. */
function RuleErrors({ errors }: { errors: readonly string[] }) {
  return (
    <>
      {errors.map((message) => (
        <div key={message}>{message}</div>
      ))}
    </>
  );
}
