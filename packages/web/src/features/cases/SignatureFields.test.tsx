import {
  CASE_MESSAGES,
  IMAGE_ACTION_MESSAGES,
  MESSAGES,
  ROLE_PERMISSIONS,
  SIGNATURE_MESSAGES,
  SIGNATURE_TEXT,
  type CaseStatus,
  type UserInfo,
} from '@lamina/domain';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setCsrfToken } from '../../api/client';
import { fullPageNavigate } from '../../lib/browser';
import { makeCase, makeStudy, makeUserAs } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { LocationProbe, renderRoutes } from '../../test/render';
import type { Signing } from './api';
import { CaseActionDialog } from './CaseActionDialog';
import { PassQcDialog } from './PassQc';

vi.mock(import('../../lib/browser'), async (importOriginal) => ({
  ...(await importOriginal()),
  fullPageNavigate: vi.fn(),
  currentPath: () => '/studies/3/cases/40?image=1',
}));

beforeEach(() => {
  setCsrfToken('token');
  window.sessionStorage.clear();
  vi.mocked(fullPageNavigate).mockClear();
});
afterEach(cleanup);

const MEANING = { READ: '“I completed this read”', LAB_QC: '“Lab QC passed”', ISC_QC: '“ISC QC passed”' };
const reader = (overrides: Partial<UserInfo> = {}) =>
  makeUserAs('CR', [...ROLE_PERMISSIONS.CR], {
    firstName: 'Rita',
    lastName: 'Reader',
    username: 'reader1',
    ...overrides,
  });
const FORWARD = 'PATCH /api/cases/40/status/forward';
const scored = (status: CaseStatus = 'PROCESSED') => ({
  body: { success: true, message: CASE_MESSAGES.scored, case: makeCase({ id: 40, status }) },
});
const refused = (status: number, message: string) => ({ status, body: { success: false, message } });

/** The forward confirmation of case 40 (study 3) in `status`, the study signing or not. */
function renderForward(
  status: CaseStatus,
  {
    signs,
    user = reader(),
    replies = {},
  }: { signs: boolean; user?: UserInfo; replies?: Parameters<typeof mockFetch>[0] },
) {
  const mock = mockFetch({ 'GET /api/studies/3': { body: makeStudy({ id: 3, signatures: signs }) }, ...replies });
  const target = { id: 40, studyId: 3, procId: 'ENDO-40', status, prevWorkflowStatuses: [] };
  const onClose = vi.fn();
  const view = renderRoutes(
    [
      { path: '/studies/3/cases/40', element: <CaseActionDialog kind="forward" target={target} onClose={onClose} /> },
      { path: '*', element: <LocationProbe /> },
    ],
    { path: '/studies/3/cases/40', user },
  );
  return { ...mock, ...view, onClose };
}

const password = (dialog: HTMLElement) => within(dialog).getByLabelText<HTMLInputElement>(/^Password/);
const button = (dialog: HTMLElement, name: string) => within(dialog).getByRole<HTMLButtonElement>('button', { name });

describe('electronic signatures in the confirmations (issue 30)', () => {
  it('Mark as Scored in a study that signs: the meaning, the signer, the statement and the password, sent once', async () => {
    const { calls, queryClient } = renderForward('PROCESSED', { signs: true, replies: { [FORWARD]: scored() } });
    const dialog = await screen.findByRole('dialog', { name: 'Mark as Scored' });
    const block = await within(dialog).findByRole('region', { name: SIGNATURE_TEXT.heading });
    within(block).getByRole('heading', { name: 'Electronic signature' });
    within(block).getByText(MEANING.READ);
    expect(within(block).getByText(/^Signer:/).textContent).toBe('Signer: Rita Reader (reader1)');
    within(block).getByText(SIGNATURE_TEXT.statement);
    expect(SIGNATURE_TEXT.statement).toMatch(
      /21 CFR Part 11.*legally binding equivalent of your handwritten signature/,
    );
    const field = password(dialog);
    expect(field.type).toBe('password');
    expect(field.getAttribute('autocomplete')).toBe('current-password');
    expect(field.required).toBe(true);
    expect(document.activeElement).toBe(field);
    // Confirm waits for the password.
    expect(button(dialog, 'Mark as Scored').disabled).toBe(true);
    fireEvent.change(field, { target: { value: 's3cret pass' } });
    expect(button(dialog, 'Mark as Scored').disabled).toBe(false);
    fireEvent.click(button(dialog, 'Mark as Scored'));
    await waitFor(() =>
      expect(calls.find((c) => c.method === 'PATCH')?.body).toEqual({ signaturePassword: 's3cret pass' }),
    );
    expect((await screen.findByTestId('location')).textContent).toBe('/studies/3');
    // Nothing keeps the password after the request, not even the mutation's variables in the cache.
    const [mutation] = queryClient.getMutationCache().getAll();
    const signing = (mutation?.state.variables as { signing?: Signing } | undefined)?.signing;
    expect(signing).toBeDefined();
    expect(signing?.takePassword()).toBeUndefined();
  });

  it('a wrong password: the message in the dialog, which stays open, the field cleared; no logout', async () => {
    const { calls, onClose } = renderForward('PROCESSED', {
      signs: true,
      replies: { [FORWARD]: [refused(401, SIGNATURE_MESSAGES.passwordIncorrect), scored()] },
    });
    const dialog = await screen.findByRole('dialog', { name: 'Mark as Scored' });
    fireEvent.change(await within(dialog).findByLabelText(/^Password/), { target: { value: 'wrong' } });
    fireEvent.click(button(dialog, 'Mark as Scored'));
    expect((await within(dialog).findByRole('alert')).textContent).toBe('The signature password is incorrect');
    expect(password(dialog).value).toBe('');
    expect(document.activeElement).toBe(password(dialog));
    expect(button(dialog, 'Mark as Scored').disabled).toBe(true);
    expect(onClose).not.toHaveBeenCalled();
    expect(fullPageNavigate).not.toHaveBeenCalled();
    expect(screen.getByRole('dialog', { name: 'Mark as Scored' })).toBe(dialog);
    // The right one, typed again and sent with Enter, completes it.
    fireEvent.change(password(dialog), { target: { value: 'right' } });
    fireEvent.keyDown(password(dialog), { key: 'Enter' });
    await waitFor(() => expect(calls.filter((c) => c.method === 'PATCH').map((c) => c.body)).toHaveLength(2));
    expect(calls.filter((c) => c.method === 'PATCH').map((c) => c.body)).toEqual([
      { signaturePassword: 'wrong' },
      { signaturePassword: 'right' },
    ]);
    await waitFor(() => expect(onClose).toHaveBeenCalled());
  });

  it('too many wrong passwords: the lockout message in the dialog', async () => {
    renderForward('PROCESSED', { signs: true, replies: { [FORWARD]: refused(429, MESSAGES.tooManyLogins) } });
    const dialog = await screen.findByRole('dialog', { name: 'Mark as Scored' });
    fireEvent.change(await within(dialog).findByLabelText(/^Password/), { target: { value: 'wrong' } });
    fireEvent.click(button(dialog, 'Mark as Scored'));
    expect((await within(dialog).findByRole('alert')).textContent).toBe(MESSAGES.tooManyLogins);
    expect(password(dialog).value).toBe('');
  });

  it('a 401 other than the signature’s (the session ended) still goes to /login', async () => {
    renderForward('PROCESSED', { signs: true, replies: { [FORWARD]: refused(401, MESSAGES.pleaseLogIn) } });
    const dialog = await screen.findByRole('dialog', { name: 'Mark as Scored' });
    fireEvent.change(await within(dialog).findByLabelText(/^Password/), { target: { value: 'pw' } });
    fireEvent.click(button(dialog, 'Mark as Scored'));
    await waitFor(() =>
      expect(fullPageNavigate).toHaveBeenCalledWith(
        `/login?redirect=${encodeURIComponent('/studies/3/cases/40?image=1')}`,
      ),
    );
  });

  it('no signature block in a study that does not sign: the confirmation as before, no password sent', async () => {
    const { calls } = renderForward('PROCESSED', { signs: false, replies: { [FORWARD]: scored() } });
    const dialog = await screen.findByRole('dialog', { name: 'Mark as Scored' });
    await waitFor(() => expect(calls.some((c) => c.path === '/api/studies/3')).toBe(true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(within(dialog).queryByRole('region', { name: SIGNATURE_TEXT.heading })).toBeNull();
    expect(within(dialog).queryByText(/Electronic signature|I completed this read/)).toBeNull();
    expect(within(dialog).queryByLabelText(/^Password/)).toBeNull();
    expect(button(dialog, 'Mark as Scored').disabled).toBe(false);
    fireEvent.click(button(dialog, 'Mark as Scored'));
    await waitFor(() => expect(calls.some((c) => c.method === 'PATCH')).toBe(true));
    expect(calls.find((c) => c.method === 'PATCH')?.body).toBeUndefined();
  });

  it('the server says the study signs ("Signature required"): the block appears and the password goes with the next try', async () => {
    const { calls } = renderForward('PROCESSED', {
      signs: false,
      replies: { [FORWARD]: [refused(400, SIGNATURE_MESSAGES.required), scored()] },
    });
    const dialog = await screen.findByRole('dialog', { name: 'Mark as Scored' });
    await waitFor(() => expect(calls.some((c) => c.path === '/api/studies/3')).toBe(true));
    fireEvent.click(button(dialog, 'Mark as Scored'));
    expect((await within(dialog).findByRole('alert')).textContent).toBe('Signature required');
    within(dialog).getByText(MEANING.READ);
    fireEvent.change(password(dialog), { target: { value: 'pw' } });
    fireEvent.click(button(dialog, 'Mark as Scored'));
    await waitFor(() =>
      expect(calls.filter((c) => c.method === 'PATCH').map((c) => c.body)).toEqual([
        undefined,
        { signaturePassword: 'pw' },
      ]),
    );
  });

  it('Pass Lab QC and Pass ISC QC of the case sign their own meanings', async () => {
    const labtech = makeUserAs('LabTech', [...ROLE_PERMISSIONS.LabTech]);
    const { calls } = renderForward('PENDING_LAB_QC', {
      signs: true,
      user: labtech,
      replies: { [FORWARD]: scored('PENDING_QC') },
    });
    let dialog = await screen.findByRole('dialog', { name: 'Confirm Case Status Change' });
    await within(dialog).findByText(MEANING.LAB_QC);
    expect(within(dialog).getByText(/^Signer:/).textContent).toBe('Signer: Ada Lovelace (ada)');
    fireEvent.change(password(dialog), { target: { value: 'lab pw' } });
    fireEvent.click(button(dialog, 'Pass Lab QC'));
    await waitFor(() => expect(calls.find((c) => c.method === 'PATCH')?.body).toEqual({ signaturePassword: 'lab pw' }));
    cleanup();
    renderForward('PENDING_QC', { signs: true, user: makeUserAs('ISC', [...ROLE_PERMISSIONS.ISC]) });
    dialog = await screen.findByRole('dialog', { name: 'Confirm Case Status Change' });
    await within(dialog).findByText(MEANING.ISC_QC);
    expect(button(dialog, 'Pass ISC QC').disabled).toBe(true);
  });

  it('an image’s Pass QC signs "ISC QC passed" with the password in its body', async () => {
    const { calls } = mockFetch({
      'GET /api/studies/3': { body: makeStudy({ id: 3, signatures: true }) },
      'PATCH /api/images/5/pass-qc': { body: { success: true, message: IMAGE_ACTION_MESSAGES.passedQc, imageId: 5 } },
    });
    const onClose = vi.fn();
    renderRoutes(
      [
        {
          path: '*',
          element: (
            <PassQcDialog
              image={{ id: 5, name: 'slide-5.svs', status: 'ISC_QC_PENDING' }}
              caseId={40}
              studyId={3}
              onClose={onClose}
            />
          ),
        },
      ],
      { user: makeUserAs('ISC', [...ROLE_PERMISSIONS.ISC]) },
    );
    const dialog = await screen.findByRole('dialog', { name: 'Confirm Image Status Change' });
    await within(dialog).findByText(MEANING.ISC_QC);
    expect(button(dialog, 'Pass QC').disabled).toBe(true);
    fireEvent.change(password(dialog), { target: { value: 'isc pw' } });
    fireEvent.click(button(dialog, 'Pass QC'));
    await waitFor(() => expect(onClose).toHaveBeenCalled());
    expect(calls.find((c) => c.method === 'PATCH')).toMatchObject({
      path: '/api/images/5/pass-qc',
      body: { signaturePassword: 'isc pw' },
    });
  });

  it('an image’s Pass QC in a study that does not sign: no block, no body', async () => {
    const { calls } = mockFetch({
      'GET /api/studies/3': { body: makeStudy({ id: 3, signatures: false }) },
      'PATCH /api/images/5/pass-qc': { body: { success: true, message: IMAGE_ACTION_MESSAGES.passedQc, imageId: 5 } },
    });
    renderRoutes(
      [
        {
          path: '*',
          element: (
            <PassQcDialog
              image={{ id: 5, name: 'slide-5.svs', status: 'LAB_QC_PENDING' }}
              caseId={40}
              studyId={3}
              onClose={vi.fn()}
            />
          ),
        },
      ],
      { user: makeUserAs('LabTech', [...ROLE_PERMISSIONS.LabTech]) },
    );
    const dialog = await screen.findByRole('dialog', { name: 'Confirm Image Status Change' });
    await waitFor(() => expect(calls.some((c) => c.path === '/api/studies/3')).toBe(true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(within(dialog).queryByText(MEANING.LAB_QC)).toBeNull();
    fireEvent.click(button(dialog, 'Pass QC'));
    await waitFor(() => expect(calls.some((c) => c.method === 'PATCH')).toBe(true));
    expect(calls.find((c) => c.method === 'PATCH')?.body).toBeUndefined();
  });

  it('a single sign-on user: no password field but the button to sign in again, back to this page', async () => {
    const sso = reader({ signsWith: 'provider' });
    const { calls } = renderForward('PROCESSED', {
      signs: true,
      user: sso,
      replies: { [FORWARD]: [refused(401, SIGNATURE_MESSAGES.reauthenticate), scored()] },
    });
    let dialog = await screen.findByRole('dialog', { name: 'Mark as Scored' });
    await within(dialog).findByText(MEANING.READ);
    expect(within(dialog).queryByLabelText(/^Password/)).toBeNull();
    within(dialog).getByText(SIGNATURE_TEXT.reauthNeeded);
    const signIn = within(dialog).getByRole('button', { name: 'Sign in again to sign' });
    expect(signIn.getAttribute('href')).toBe(
      `/api/auth/oidc/login?reauth=1&redirect=${encodeURIComponent('/studies/3/cases/40?image=1')}`,
    );
    // Without having signed in again, the server refuses and the dialog offers the sign-in.
    fireEvent.click(button(dialog, 'Mark as Scored'));
    expect((await within(dialog).findByRole('alert')).textContent).toBe(SIGNATURE_MESSAGES.reauthenticate);
    within(dialog).getByRole('button', { name: 'Sign in again to sign' });

    // Back from the provider (the click noted it for the tab): the dialog says so and sends no password.
    signIn.addEventListener('click', (event) => event.preventDefault());
    fireEvent.click(signIn);
    cleanup();
    const again = renderForward('PROCESSED', { signs: true, user: sso, replies: { [FORWARD]: scored() } });
    dialog = await screen.findByRole('dialog', { name: 'Mark as Scored' });
    await within(dialog).findByText(SIGNATURE_TEXT.reauthDone);
    expect(within(dialog).queryByRole('button', { name: 'Sign in again to sign' })).toBeNull();
    expect(button(dialog, 'Mark as Scored').disabled).toBe(false);
    fireEvent.click(button(dialog, 'Mark as Scored'));
    await waitFor(() => expect(again.calls.some((c) => c.method === 'PATCH')).toBe(true));
    expect(again.calls.find((c) => c.method === 'PATCH')?.body).toBeUndefined();
    expect(calls.filter((c) => c.method === 'PATCH')).toHaveLength(1);
    // Used once: the next signature asks to sign in again.
    await waitFor(() => expect(window.sessionStorage.length).toBe(0));
  });
});
