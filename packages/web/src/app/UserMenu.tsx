import { Button, Menu, MenuDivider, MenuItem, PopoverNext } from '@blueprintjs/core';
import type { AppConfig, UserInfo } from '@lamina/domain';
import { useState } from 'react';
import { useLogout } from '../api/auth';
import { WorkAsDialog } from './WorkAsDialog';

export function displayName(user: Pick<UserInfo, 'firstName' | 'lastName' | 'username'>): string {
  const name = [user.firstName, user.lastName].filter((part) => part != null && part.trim() !== '').join(' ');
  return name === '' ? user.username : name;
}

interface UserMenuProps {
  user: UserInfo;
  config: AppConfig;
}

/** The header's user menu (doc 1 §2.3): Work As..., the hub link when configured, Logout. */
export function UserMenu({ user, config }: UserMenuProps) {
  const [workAsOpen, setWorkAsOpen] = useState(false);
  const logout = useLogout();

  function handleWorkAs() {
    setWorkAsOpen(true);
  }

  function handleLogout() {
    logout.mutate();
  }

  const menu = (
    <Menu aria-label="User menu">
      <MenuItem icon="swap-horizontal" text="Work As..." onClick={handleWorkAs} />
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
