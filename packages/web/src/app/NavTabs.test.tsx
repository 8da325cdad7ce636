import { NAV_TABS } from '@lamina/domain';
import { cleanup, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { renderWithProviders } from '../test/render';
import { NavTabs } from './NavTabs';

afterEach(cleanup);

function visibleLabels(): string[] {
  return screen.queryAllByRole('link').map((link) => link.textContent);
}

describe('NavTabs', () => {
  it('shows no tab without a navigation permission', () => {
    renderWithProviders(<NavTabs actions={['S_Main_EditStudy']} />);
    expect(screen.queryByRole('navigation')).toBeNull();
  });

  it('shows every tab, in order, to a user with every permission', () => {
    renderWithProviders(<NavTabs actions={NAV_TABS.flatMap((t) => t.anyOf)} />);
    expect(visibleLabels()).toEqual(['Studies', 'Image Management', 'Reports', 'Queries', 'Users']);
  });

  it.each([
    [['S_Main_ViewStudyPage'], ['Studies']],
    [['IM_CaseListTab_ViewPage'], ['Image Management']],
    [['IM_ImageListTab_ViewImageslistTab'], ['Image Management']],
    [['R_ViewReportsTab'], ['Reports']],
    [['Q_ViewQueriesCases'], ['Queries']],
    [['Q_ViewQueriesImages'], ['Queries']],
    [['UM_ViewUsersPage'], ['Users']],
    [
      ['S_Main_ViewStudyPage', 'UM_ViewUsersPage'],
      ['Studies', 'Users'],
    ],
  ])('with %j shows %j', (actions, labels) => {
    renderWithProviders(<NavTabs actions={actions} />);
    expect(visibleLabels()).toEqual(labels);
  });

  it('links each tab to its page by accessible name', () => {
    renderWithProviders(<NavTabs actions={NAV_TABS.flatMap((t) => t.anyOf)} />);
    expect(screen.getByRole('link', { name: 'Studies' }).getAttribute('href')).toBe('/studies');
    expect(screen.getByRole('link', { name: 'Image Management' }).getAttribute('href')).toBe('/image-management');
    expect(screen.getByRole('link', { name: 'Reports' }).getAttribute('href')).toBe('/reports');
    expect(screen.getByRole('link', { name: 'Queries' }).getAttribute('href')).toBe('/queries');
    expect(screen.getByRole('link', { name: 'Users' }).getAttribute('href')).toBe('/users');
  });

  it('highlights the tab of the current page, also on its sub-pages', () => {
    renderWithProviders(<NavTabs actions={NAV_TABS.flatMap((t) => t.anyOf)} />, { path: '/image-management/cases' });
    const active = screen.getByRole('link', { name: 'Image Management' });
    expect(active.getAttribute('aria-current')).toBe('page');
    expect(active.classList.contains('bp6-active')).toBe(true);
    expect(screen.getByRole('link', { name: 'Studies' }).getAttribute('aria-current')).toBeNull();
  });
});
