import { H2, NonIdealState, type IconName } from '@blueprintjs/core';
import type { ReactNode } from 'react';
import { usePageTitle } from './usePageTitle';

interface PlaceholderPageProps {
  title: string;
  icon: IconName;
  /** What this page will hold once it is built. */
  description: ReactNode;
  /** Rendered between the title and the placeholder, e.g. route tabs. */
  children?: ReactNode;
  actions?: ReactNode;
}

/** A guarded page whose content a later issue fills in. */
export function PlaceholderPage({ title, icon, description, children, actions }: PlaceholderPageProps) {
  usePageTitle(title);
  return (
    <section className="lamina-page" aria-labelledby="page-title">
      <header className="lamina-page-header">
        <H2 id="page-title">{title}</H2>
        {actions}
      </header>
      {children}
      <NonIdealState className="lamina-placeholder" icon={icon} title="Coming soon" description={description} />
    </section>
  );
}
