import { Tab, Tabs } from '@blueprintjs/core';
import { useNavigate } from 'react-router';

export interface RouteTab<T extends string> {
  readonly id: T;
  readonly label: string;
}

interface RouteTabsProps<T extends string> {
  /** Used as the Tabs id and for accessible names. */
  id: string;
  tabs: readonly RouteTab<T>[];
  selected: T;
  /** Path for a tab, e.g. (tab) => `/studies/3/${tab}`. */
  pathFor: (tab: T) => string;
}

/** Blueprint tabs whose selection lives in the URL (`/…/:tab`). */
export function RouteTabs<T extends string>({ id, tabs, selected, pathFor }: RouteTabsProps<T>) {
  const navigate = useNavigate();

  function handleChange(next: string) {
    const tab = tabs.find((t) => t.id === next);
    if (tab) void navigate(pathFor(tab.id));
  }

  return (
    <Tabs id={id} selectedTabId={selected} onChange={handleChange} className="lamina-route-tabs" size="large">
      {tabs.map((tab) => (
        <Tab key={tab.id} id={tab.id} title={tab.label} />
      ))}
    </Tabs>
  );
}

/** The tab named in the URL, the default when absent, or `null` when the URL names an unknown tab. */
export function parseTab<T extends string>(
  raw: string | undefined,
  tabs: readonly RouteTab<T>[],
  fallback: T,
): T | null {
  if (raw === undefined || raw === '') return fallback;
  return tabs.find((t) => t.id === raw)?.id ?? null;
}
