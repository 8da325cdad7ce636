import { MESSAGES } from '@lamina/domain';
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setCsrfToken } from '../api/client';
import { makeUser } from '../test/fixtures';
import { mockFetch } from '../test/mockFetch';
import { renderWithProviders } from '../test/render';
import { reloadPage } from '../lib/browser';
import { WorkAsDialog } from './WorkAsDialog';

vi.mock(import('../lib/browser'), async (importOriginal) => ({
  ...(await importOriginal()),
  reloadPage: vi.fn(),
  fullPageNavigate: vi.fn(),
}));

const isc = { id: 2, name: 'ISC', displayName: 'ISC Reviewer' };
const roles = [
  { id: 2, displayName: 'ISC Reviewer' },
  { id: 5, displayName: 'Data Manager' },
  { id: 9, displayName: 'Central Reader' },
];

function renderDialog(onClose = vi.fn()) {
  renderWithProviders(<WorkAsDialog isOpen onClose={onClose} currentRole={isc} />);
  return onClose;
}

function saveButton(): HTMLElement {
  return screen.getByRole('button', { name: 'Save' });
}

beforeEach(() => setCsrfToken('token'));
afterEach(() => {
  cleanup();
  vi.mocked(reloadPage).mockClear();
});

describe('WorkAsDialog', () => {
  it("lists only the user's other roles", async () => {
    mockFetch({ 'GET /api/users/availableRoles': { body: roles } });
    renderDialog();
    screen.getByText('Work As...');
    await screen.findByRole('radio', { name: 'Data Manager' });
    screen.getByRole('radio', { name: 'Central Reader' });
    expect(screen.queryByRole('radio', { name: 'ISC Reviewer' })).toBeNull();
    // The first choice has the focus, not the dialog's focus trap (issue 20).
    await waitFor(() => expect(document.activeElement).toBe(screen.getByRole('radio', { name: 'Data Manager' })));
  });

  it('says there is no other role when the current one is all there is', async () => {
    mockFetch({ 'GET /api/users/availableRoles': { body: [{ id: 2, displayName: 'ISC Reviewer' }] } });
    renderDialog();
    await screen.findByText(MESSAGES.noOtherRoles);
    expect(screen.queryByRole('radio')).toBeNull();
    expect(saveButton().hasAttribute('disabled')).toBe(true);
  });

  it('keeps Save disabled until a role is chosen', async () => {
    mockFetch({ 'GET /api/users/availableRoles': { body: roles } });
    renderDialog();
    const radio = await screen.findByRole('radio', { name: 'Central Reader' });
    expect(saveButton().hasAttribute('disabled')).toBe(true);
    fireEvent.click(radio);
    expect(saveButton().hasAttribute('disabled')).toBe(false);
  });

  it('saves the chosen role with the CSRF token and reloads the page', async () => {
    const { calls } = mockFetch({
      'GET /api/users/availableRoles': { body: roles },
      'PUT /api/users/workAs': { body: { success: true, message: 'Role switched', user: makeUser() } },
    });
    renderDialog();
    fireEvent.click(await screen.findByRole('radio', { name: 'Data Manager' }));
    fireEvent.click(saveButton());
    await waitFor(() => expect(reloadPage).toHaveBeenCalledTimes(1));
    const put = calls.find((c) => c.method === 'PUT');
    expect(put?.path).toBe('/api/users/workAs');
    expect(put?.body).toEqual({ roleId: 5 });
    expect(put?.headers.get('X-CSRF-Token')).toBe('token');
  });

  it('shows Error switching roles in a red callout and stays open when saving fails', async () => {
    mockFetch({
      'GET /api/users/availableRoles': { body: roles },
      'PUT /api/users/workAs': { status: 403, body: { success: false, message: MESSAGES.roleNotHeld } },
    });
    const onClose = renderDialog();
    fireEvent.click(await screen.findByRole('radio', { name: 'Central Reader' }));
    fireEvent.click(saveButton());
    const callout = await screen.findByText(MESSAGES.errorSwitchingRoles);
    expect(callout.closest('.bp6-callout')?.classList.contains('bp6-intent-danger')).toBe(true);
    screen.getByText('Work As...');
    expect(onClose).not.toHaveBeenCalled();
    expect(reloadPage).not.toHaveBeenCalled();
  });

  it('shows the error when the roles cannot be loaded', async () => {
    mockFetch({ 'GET /api/users/availableRoles': { status: 500, body: { success: false, message: 'Database down' } } });
    renderDialog();
    await screen.findByText('Database down');
    expect(saveButton().hasAttribute('disabled')).toBe(true);
  });

  it('closes with Cancel', async () => {
    mockFetch({ 'GET /api/users/availableRoles': { body: roles } });
    const onClose = renderDialog();
    await screen.findByRole('radio', { name: 'Central Reader' });
    fireEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(onClose).toHaveBeenCalledTimes(1);
  });
});
