import { STUDY_MESSAGES, type UserInfo } from '@lamina/domain';
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fullPageReplace } from '../../lib/browser';
import { makeStudy, makeUserAs } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { LocationProbe, renderRoutes } from '../../test/render';
import { resolveStudyTab } from './studyTabs';
import { StudyPage } from './StudyPage';

vi.mock(import('../../lib/browser'), async (importOriginal) => ({
  ...(await importOriginal()),
  fullPageReplace: vi.fn(),
}));

afterEach(() => {
  cleanup();
  vi.mocked(fullPageReplace).mockClear();
});

const BOTH = ['S_Main_ViewStudyPage', 'S_Main_ViewCasesTab', 'S_Main_ViewImagesTab'];

function renderStudy(path: string, user: UserInfo, study = makeStudy()) {
  mockFetch({ [`GET /api/studies/${study.id}`]: { body: study } });
  return renderRoutes(
    [
      { path: '/studies/:id/:tab?', element: <StudyPage /> },
      { path: '*', element: <LocationProbe /> },
    ],
    { path, user },
  );
}

function selectedTab(): string | null {
  return screen.getByRole('tab', { selected: true }).textContent;
}

describe('resolveStudyTab (doc 1 §2.5)', () => {
  it.each([
    ['cases', BOTH, 'cases'],
    ['images', BOTH, 'images'],
    ['cases', ['S_Main_ViewImagesTab'], 'images'],
    ['images', ['S_Main_ViewCasesTab'], 'cases'],
    ['cases', ['S_Main_ViewStudyPage'], null],
  ] as const)('%s with %j → %s', (requested, actions, expected) => {
    expect(resolveStudyTab(requested, actions)).toBe(expected);
  });
});

describe('study page', () => {
  it('shows the study name, both tabs and the cases tab by default', async () => {
    renderStudy('/studies/3', makeUserAs('DM', BOTH));
    await screen.findByRole('heading', { level: 2, name: 'GUT-301' });
    expect(screen.getAllByRole('tab').map((t) => t.textContent)).toEqual(['Cases', 'Images']);
    expect(selectedTab()).toBe('Cases');
  });

  it('falls back to the other tab when the requested one is not allowed', async () => {
    renderStudy('/studies/3/cases', makeUserAs('UPLOADER', ['S_Main_ViewStudyPage', 'S_Main_ViewImagesTab']));
    await screen.findByRole('heading', { level: 2, name: 'GUT-301' });
    expect(screen.getAllByRole('tab').map((t) => t.textContent)).toEqual(['Images']);
    expect(selectedTab()).toBe('Images');
  });

  it('sends a user allowed neither tab to /accessDenied', async () => {
    renderStudy('/studies/3/images', makeUserAs('DM', ['S_Main_ViewStudyPage']));
    await waitFor(() => expect(fullPageReplace).toHaveBeenCalledWith('/accessDenied'));
  });

  it("shows the banner 'On hold {reason}' for a study on hold", async () => {
    renderStudy(
      '/studies/3/cases',
      makeUserAs('DM', BOTH),
      makeStudy({ onHold: true, onHoldReason: 'Scanner recalibration' }),
    );
    const banner = (await screen.findByText('On hold')).closest('[role="status"]')!;
    expect(banner.textContent).toBe('On hold Scanner recalibration');
    // The status stands apart from the reason (issue 20).
    expect(banner.querySelector('strong')?.textContent).toBe('On hold');
    expect(banner.closest('.bp6-callout')?.classList.contains('bp6-intent-warning')).toBe(true);
  });

  it('shows no banner for an active study', async () => {
    renderStudy('/studies/3/cases', makeUserAs('DM', BOTH));
    await screen.findByRole('heading', { level: 2, name: 'GUT-301' });
    expect(screen.queryByText(/^On hold/)).toBeNull();
  });

  it('offers Edit Study with the edit-study permission', async () => {
    renderStudy('/studies/3/cases', makeUserAs('StudyAdmin', [...BOTH, 'S_Main_EditStudy']));
    fireEvent.click(await screen.findByRole('button', { name: 'Edit Study' }));
    expect((await screen.findByTestId('location')).textContent).toBe('/studies/3/configure/settings');
  });

  it('hides Edit Study without the permission', async () => {
    renderStudy('/studies/3/cases', makeUserAs('DM', BOTH));
    await screen.findByRole('heading', { level: 2, name: 'GUT-301' });
    expect(screen.queryByRole('button', { name: 'Edit Study' })).toBeNull();
  });

  it("shows 'Study not found' as a warning on 404", async () => {
    mockFetch({
      'GET /api/studies/99': { status: 404, body: { success: false, message: STUDY_MESSAGES.studyNotFound } },
    });
    renderRoutes([{ path: '/studies/:id/:tab?', element: <StudyPage /> }], {
      path: '/studies/99/cases',
      user: makeUserAs('DM', BOTH),
    });
    const warning = await screen.findByText(STUDY_MESSAGES.studyNotFound);
    expect(warning.closest('.bp6-callout')?.classList.contains('bp6-intent-warning')).toBe(true);
  });

  it('shows other failures in a red callout', async () => {
    mockFetch({ 'GET /api/studies/3': { status: 502 } });
    renderRoutes([{ path: '/studies/:id/:tab?', element: <StudyPage /> }], {
      path: '/studies/3/cases',
      user: makeUserAs('DM', BOTH),
    });
    const error = await screen.findByText('Unable to fetch study 3');
    expect(error.closest('.bp6-callout')?.classList.contains('bp6-intent-danger')).toBe(true);
  });
});
