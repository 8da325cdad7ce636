import { Button, NonIdealState } from '@blueprintjs/core';
import { MESSAGES, visibleNavTabs } from '@lamina/domain';
import { useState } from 'react';
import { Link } from 'react-router';
import { useUserInfo } from '../../api/users';
import { WorkAsDialog } from '../../components/WorkAsDialog';
import { usePageTitle } from '../../components/usePageTitle';

/** /accessDenied (doc 1 §2.1): contact an administrator, or switch to a role with the right permissions. */
export function AccessDeniedPage() {
  usePageTitle(MESSAGES.accessDeniedTitle);
  const user = useUserInfo().data;
  const [workAsOpen, setWorkAsOpen] = useState(false);
  const hasOtherRoles = (user?.roles.length ?? 0) > 1;
  const firstTab = user ? visibleNavTabs(user.actions)[0] : undefined;

  return (
    <>
      <NonIdealState
        className="lamina-status-page"
        icon="lock"
        title={MESSAGES.accessDeniedTitle}
        description={MESSAGES.accessDeniedHelp}
        action={
          <div className="lamina-status-actions">
            {hasOtherRoles && (
              <Button intent="primary" icon="swap-horizontal" text="Work As..." onClick={() => setWorkAsOpen(true)} />
            )}
            {firstTab && <Link to={firstTab.path}>Go to {firstTab.label}</Link>}
          </div>
        }
      />
      {user && <WorkAsDialog isOpen={workAsOpen} onClose={() => setWorkAsOpen(false)} currentRole={user.workAsRole} />}
    </>
  );
}
