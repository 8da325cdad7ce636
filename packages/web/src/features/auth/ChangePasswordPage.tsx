import { Button, Callout, Card, FormGroup, H2, InputGroup } from '@blueprintjs/core';
import { MESSAGES, PASSWORD_RULES, passwordRuleErrors } from '@lamina/domain';
import { useId, useState, type ReactNode, type SubmitEvent } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { errorMessage } from '../../api/ApiError';
import { useChangePassword, useLogout } from '../../api/auth';
import { useUserInfo } from '../../api/users';
import { afterPasswordChange } from '../../lib/safeRedirect';
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
          <PasswordField
            id={ids.current}
            label="Current password"
            name="currentPassword"
            autoComplete="current-password"
            autoFocus
            value={currentPassword}
            onChange={setCurrentPassword}
            onBlur={() => setCurrentTouched(true)}
            invalid={Boolean(currentError)}
            helper={currentError}
            disabled={submitting}
          />
          <PasswordField
            id={ids.next}
            label="New password"
            name="newPassword"
            autoComplete="new-password"
            value={newPassword}
            onChange={setNewPassword}
            invalid={newPassword !== '' && ruleErrors.length > 0}
            helper={
              ruleErrors.length === 0 || newPassword === '' ? PASSWORD_RULES_HINT : <RuleErrors errors={ruleErrors} />
            }
            disabled={submitting}
          />
          <PasswordField
            id={ids.confirm}
            label="Confirm new password"
            name="confirmPassword"
            autoComplete="new-password"
            value={confirmation}
            onChange={setConfirmation}
            invalid={Boolean(confirmError)}
            helper={confirmError}
            disabled={submitting}
          />
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

interface PasswordFieldProps {
  id: string;
  label: string;
  name: string;
  autoComplete: 'current-password' | 'new-password';
  autoFocus?: boolean;
  value: string;
  onChange: (value: string) => void;
  onBlur?: () => void;
  invalid: boolean;
  helper: ReactNode;
  disabled: boolean;
}

/** A labelled password input with its hint or error below. */
function PasswordField({ id, label, invalid, helper, onChange, ...input }: PasswordFieldProps) {
  return (
    <FormGroup label={label} labelFor={id} intent={invalid ? 'danger' : 'none'} helperText={helper}>
      <InputGroup id={id} type="password" size="large" onValueChange={onChange} {...input} />
    </FormGroup>
  );
}
