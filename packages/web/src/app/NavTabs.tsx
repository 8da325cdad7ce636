import { Classes } from '@blueprintjs/core';
import { visibleNavTabs } from '@lamina/domain';
import { NavLink } from 'react-router';

function tabClass({ isActive }: { isActive: boolean }): string {
  return [Classes.BUTTON, Classes.MINIMAL, 'lamina-nav-tab', isActive ? `${Classes.ACTIVE} lamina-nav-tab-active` : '']
    .filter(Boolean)
    .join(' ');
}

/** The top navigation tabs a user may see (doc 1 §2.3); the page's own tab is highlighted. */
export function NavTabs({ actions }: { actions: readonly string[] }) {
  const tabs = visibleNavTabs(actions);
  if (tabs.length === 0) return null;
  return (
    <nav aria-label="Main" className="lamina-nav">
      {tabs.map((tab) => (
        <NavLink key={tab.id} to={tab.path} className={tabClass} data-testid={`nav-${tab.id}`}>
          {tab.label}
        </NavLink>
      ))}
    </nav>
  );
}
