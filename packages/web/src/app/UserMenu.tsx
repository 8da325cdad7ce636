import { Button, Menu, MenuDivider, MenuItem, PopoverNext } from '@blueprintjs/core';
import { isWorkingAsSystemAdmin, type AppConfig, type UserInfo } from '@lamina/domain';
import { useState } from 'react';
import { useLocation, useNavigate } from 'react-router';
import { useLogout } from '../api/auth';
import { CHANGE_PASSWORD_PATH, changePasswordUrlFor } from '../lib/safeRedirect';
import { QUERY_REASONS_PATH } from './adminPaths';
import { WorkAsDialog } from '../components/WorkAsDialog';

export function displayName(user: Pick<UserInfo, 'firstName' | 'lastName' | 'username'>): string {
  const name = [user.firstName, user.lastName].filter((part) => part != null && part.trim() !== '').join(' ');
  return name === '' ? user.username : name;
}

interface UserMenuProps {
  user: UserInfo;
  config: AppConfig;
}

/**
 * The header's user menu (doc 1 §2.3): Work As..., Change password (not in the spec; not with
 * LOCAL_LOGIN=off, where there are no local passwords), the hub link when configured, Logout. Work As... waits while a one-time password must be changed.
 */
export function UserMenu({ user, config }: UserMenuProps) {
  const [workAsOpen, setWorkAsOpen] = useState(false);
  const logout = useLogout();
  const navigate = useNavigate();
  const location = useLocation();

  function handleWorkAs() {
    setWorkAsOpen(true);
  }

  function handleChangePassword() {
    if (location.pathname === CHANGE_PASSWORD_PATH) return;
    void navigate(changePasswordUrlFor(`${location.pathname}${location.search}`));
  }

  function handleLogout() {
    logout.mutate();
  }

  const menu = (
    <Menu aria-label="User menu">
      {!user.mustChangePassword && <MenuItem icon="swap-horizontal" text="Work As..." onClick={handleWorkAs} />}
      {config.localLogin && <MenuItem icon="key" text="Change password" onClick={handleChangePassword} />}
      {isWorkingAsSystemAdmin(user) && (
        <MenuItem icon="properties" text="Query reasons" onClick={() => void navigate(QUERY_REASONS_PATH)} />
      )}
      {config.ssoLoginUrl !== null && <MenuItem icon="home" text="Hub" href={config.ssoLoginUrl} />}
      <MenuDivider />
      <MenuItem icon="log-out" text="Logout" onClick={handleLogout} disabled={logout.isPending} />
    </Menu>
  );

  return (
    <>
      <PopoverNext content={menu} placement="bottom-end">
        <Button variant="minimal" icon="user" endIcon="caret-down" text={displayName(user)} data-testid="user-menu" />
      </PopoverNext>
      <WorkAsDialog isOpen={workAsOpen} onClose={() => setWorkAsOpen(false)} currentRole={user.workAsRole} />
    </>
  );
}
