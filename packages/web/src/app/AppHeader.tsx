import { Alignment, Classes, Navbar, NavbarGroup, NavbarHeading, Tag } from '@blueprintjs/core';
import type { AppConfig, UserInfo } from '@lamina/domain';
import { Link } from 'react-router';
import { NavTabs } from './NavTabs';
import { UserMenu } from './UserMenu';

interface AppHeaderProps {
  config: AppConfig;
  /** `undefined` while loading, `null` when logged out. */
  user: UserInfo | null | undefined;
  embedded: boolean;
}

function Logo() {
  return (
    <NavbarHeading className="lamina-logo">
      <Link to="/" aria-label="Lamina home">
        <span className="lamina-logo-mark" aria-hidden="true" />
        Lamina
      </Link>
    </NavbarHeading>
  );
}

/**
 * The top navigation and header (doc 1 §2.3). In embedded mode only a slim bar with the logo and
 * the work-as role remains: no tabs, no user menu. No tabs either while a one-time password must
 * be changed (every page but /changePassword is closed then).
 */
export function AppHeader({ config, user, embedded }: AppHeaderProps) {
  const role = user?.workAsRole?.displayName;
  return (
    <Navbar className={embedded ? 'lamina-header lamina-header-embedded' : 'lamina-header'}>
      <NavbarGroup align={Alignment.START}>
        <Logo />
        {!embedded && user && !user.mustChangePassword && <NavTabs actions={user.actions} />}
      </NavbarGroup>
      <NavbarGroup align={Alignment.END} className="lamina-header-end">
        {user && role !== undefined && (
          <span className="lamina-work-as">
            <span className={Classes.TEXT_MUTED}>Working as</span>{' '}
            <Tag intent="primary" round data-testid="work-as-role">
              {role}
            </Tag>
          </span>
        )}
        {!embedded && user && <UserMenu user={user} config={config} />}
        {!embedded && user === null && (
          <Link to="/login" className={`${Classes.BUTTON} ${Classes.MINIMAL}`} reloadDocument>
            Log in
          </Link>
        )}
      </NavbarGroup>
    </Navbar>
  );
}
