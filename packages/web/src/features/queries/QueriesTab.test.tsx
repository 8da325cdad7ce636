import { QUERY_MESSAGES, type QueryView, type UserInfo } from '@lamina/domain';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setCsrfToken } from '../../api/client';
import { makeUserAs } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { renderWithProviders } from '../../test/render';
import { fakeXhr } from '../upload/fakeXhr';
import { QueriesTab, type QueriedImage } from './QueriesTab';
import { needsAttention } from './queryStatus';
import { makeMetadata, makeQuery } from './testData';

beforeEach(() => setCsrfToken('token'));
afterEach(cleanup);

const IMAGE: QueriedImage = { id: 1, name: 'slide-1.svs', caseId: 40 };
const labtech = (extra: string[] = []) => makeUserAs('LabTech', ['AP_CaseViewer_ViewQueries', ...extra]);

function renderTab(
  options: {
    caseQueries?: QueryView[];
    imageQueries?: QueryView[];
    user?: UserInfo;
    caseId?: number | null;
    path?: string;
    replies?: Parameters<typeof mockFetch>[0];
  } = {},
) {
  const onReplaced = vi.fn();
  const mock = mockFetch({
    'GET /api/queries/case/40': { body: { success: true, queries: options.caseQueries ?? [] } },
    'GET /api/queries/image/1': { body: { success: true, queries: options.imageQueries ?? [] } },
    'GET /api/queries/metadata': { body: makeMetadata() },
    ...options.replies,
  });
  const view = renderWithProviders(
    <QueriesTab
      studyId={3}
      caseId={options.caseId === undefined ? 40 : options.caseId}
      image={IMAGE}
      onImageReplaced={onReplaced}
    />,
    { user: options.user ?? labtech(), path: options.path ?? '/' },
  );
  return { ...mock, ...view, onReplaced };
}

const card = (id: number) => screen.findByRole('article', { name: `Query ${id}` });
const actionReply = (query: QueryView, message = 'Done') => ({ body: { success: true, message, query } });

describe('the Queries tab: cards', () => {
  it('lists the case’s and the image’s queries newest first, with status, reason, role, opener and follow-up', async () => {
    renderTab({
      caseQueries: [
        makeQuery({
          id: 6,
          objectType: 'CASE',
          openedAt: '2026-11-21T10:00:00.000Z',
          reasonText: 'Visit ID mismatch',
          childReasonText: null,
        }),
      ],
      imageQueries: [makeQuery()],
    });
    const list = await screen.findByRole('list', { name: 'Queries' });
    const cards = within(list).getAllByRole('article');
    expect(cards.map((c) => c.getAttribute('aria-label'))).toEqual(['Query 6', 'Query 5']);
    const five = within(cards[1]!);
    five.getByText('Image slide-1.svs');
    five.getByText('Blurry / out of focus – Whole slide');
    five.getByText('Lab Technician');
    five.getByText(/by isc \(ISC\)/);
    five.getByText('Jan 15 2099');
    expect(five.getByTestId('query-status').textContent).toBe('Open');
    within(cards[0]!).getByText('Case');
  });

  it('shows overdue follow-ups in red, answered in green and a cancelled query as Cancelled', async () => {
    renderTab({
      imageQueries: [
        makeQuery({ id: 1, overdue: true, dynamicStatus: 'FOLLOWUPREQUIRED', latestFollowUpOnDt: '2020-01-02' }),
        makeQuery({ id: 2, group: 'answered', resolution: 'RESOLVED', dynamicStatus: 'ANSWERED' }),
        makeQuery({ id: 3, group: 'closed', queryStatus: 'CLOSED', cancelled: true }),
      ],
    });
    const overdue = within(await card(1));
    expect(overdue.getByTestId('query-status').textContent).toBe('Follow-up required');
    expect(overdue.getByText(/Jan 2 2020/).className).toContain('lamina-overdue');
    const answered = within(await card(2)).getByTestId('query-status');
    expect(answered.textContent).toBe('Answered');
    expect(answered.className).toContain('bp6-intent-success');
    expect(within(await card(3)).getByTestId('query-status').textContent).toBe(QUERY_MESSAGES.cancelled);
  });

  it('offers exactly the actions the server sends', async () => {
    renderTab({
      imageQueries: [
        makeQuery({ id: 1, actions: ['resolve', 'unresolvable', 'comment', 'replaceImage'] }),
        makeQuery({ id: 2, actions: [] }),
        makeQuery({ id: 3, actions: ['close', 'comment'] }),
      ],
    });
    const names = async (id: number) =>
      within(await card(id))
        .queryAllByRole('button')
        .map((b) => b.textContent)
        .filter((t) => t !== null && !t.startsWith('History'));
    expect(await names(1)).toEqual(['Mark as Resolved', 'Mark Unresolvable', 'Replace image', 'Add Comment']);
    expect(await names(2)).toEqual([]);
    expect(await names(3)).toEqual(['Close Query', 'Add Comment']);
  });

  it('shows the history: opened, comments, follow-ups, resolution', async () => {
    renderTab({
      imageQueries: [
        makeQuery({
          comments: [
            {
              id: 1,
              queryId: 5,
              username: 'labtech',
              firstName: null,
              lastName: null,
              commentText: 'Rescanning',
              commentBy: 2,
              createdAt: '2026-11-21T10:00:00.000Z',
            },
          ],
          group: 'answered',
          resolution: 'RESOLVED',
          resolvedAt: '2026-11-22T10:00:00.000Z',
          resolvedBy: 'labtech',
          resolutionOption: 'Image replaced',
        }),
      ],
    });
    fireEvent.click(within(await card(5)).getByRole('button', { name: 'History (3)' }));
    const history = within(screen.getByRole('list', { name: 'History' }));
    expect(history.getAllByRole('listitem').map((li) => li.querySelector('strong')?.textContent)).toEqual([
      'Opened',
      'Comment',
      'Resolved',
    ]);
    history.getByText('Rescanning');
    history.getByText('Image replaced');
  });

  it('?queryId= opens that query’s history and highlights it', async () => {
    renderTab({ imageQueries: [makeQuery({ id: 5 }), makeQuery({ id: 9 })], path: '/?queryId=5' });
    const five = await card(5);
    expect(five.className).toContain('lamina-query-card-focused');
    within(five).getByRole('list', { name: 'History' });
    expect((await card(9)).className).not.toContain('lamina-query-card-focused');
  });

  it('shows doc 3 §8’s message when a list cannot be fetched, and the server’s own when it sends one', async () => {
    renderTab({
      replies: {
        'GET /api/queries/case/40': { status: 500 },
        'GET /api/queries/image/1': { status: 404, body: { success: false, message: 'Image not found' } },
      },
    });
    await screen.findByText(QUERY_MESSAGES.unableToFetchForCase(40));
    await screen.findByText('Image not found');
  });

  it('a query needs attention when it waits for the user’s answer, close, or overdue follow-up', () => {
    expect(needsAttention(makeQuery({ actions: ['resolve', 'comment'] }))).toBe(true);
    expect(needsAttention(makeQuery({ actions: ['close', 'comment'] }))).toBe(true);
    expect(needsAttention(makeQuery({ actions: ['followUp', 'cancel', 'comment'] }))).toBe(false);
    expect(needsAttention(makeQuery({ actions: ['followUp', 'cancel'], overdue: true }))).toBe(true);
    expect(needsAttention(makeQuery({ actions: ['comment'] }))).toBe(false);
    expect(needsAttention(makeQuery({ queryStatus: 'CLOSED', actions: ['resolve'] }))).toBe(false);
  });
});

describe('the Queries tab: dialogs', () => {
  it('Add Comment needs a text, shows the disclaimer to non-issuers, and sends it', async () => {
    const q = makeQuery({ actions: ['comment'], showDisclaimer: true });
    const { calls } = renderTab({ imageQueries: [q], replies: { 'POST /api/queries/5/comment': actionReply(q) } });
    fireEvent.click(within(await card(5)).getByRole('button', { name: 'Add Comment' }));
    const dialog = await screen.findByRole('dialog', { name: 'Add Comment' });
    within(dialog).getByText(QUERY_MESSAGES.disclaimer);
    const submit = within(dialog).getByRole('button', { name: 'Add Comment' });
    expect(submit.hasAttribute('disabled')).toBe(true);
    fireEvent.change(within(dialog).getByLabelText('Comment'), { target: { value: ' Rescan please ' } });
    fireEvent.click(submit);
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(calls.find((c) => c.path === '/api/queries/5/comment')?.body).toEqual({
      queryId: 5,
      commentText: 'Rescan please',
    });
  });

  it('the opener sees no disclaimer', async () => {
    renderTab({ imageQueries: [makeQuery({ actions: ['comment'], showDisclaimer: false })] });
    fireEvent.click(within(await card(5)).getByRole('button', { name: 'Add Comment' }));
    const dialog = await screen.findByRole('dialog', { name: 'Add Comment' });
    expect(within(dialog).queryByText(QUERY_MESSAGES.disclaimer)).toBeNull();
  });

  it('Mark as Resolved: Submit waits for a resolution option; details are optional', async () => {
    const q = makeQuery({ actions: ['resolve'] });
    const { calls } = renderTab({ imageQueries: [q], replies: { 'PATCH /api/queries/5/resolve': actionReply(q) } });
    fireEvent.click(within(await card(5)).getByRole('button', { name: 'Mark as Resolved' }));
    const dialog = await screen.findByRole('dialog', { name: 'Mark as Resolved' });
    const submit = within(dialog).getByRole('button', { name: 'Submit' });
    expect(submit.hasAttribute('disabled')).toBe(true);
    fireEvent.click(within(dialog).getByLabelText('Image replaced'));
    expect(submit.hasAttribute('disabled')).toBe(false);
    fireEvent.click(submit);
    await waitFor(() => expect(calls.some((c) => c.path === '/api/queries/5/resolve')).toBe(true));
    const call = calls.find((c) => c.path === '/api/queries/5/resolve')!;
    expect(call.method).toBe('PATCH');
    expect(call.body).toEqual({ queryId: 5, resolutionOption: 'Image replaced', commentText: null });
  });

  it('Mark Unresolvable needs a reason; a refusal shows the server’s message and the dialog stays', async () => {
    const message = `${QUERY_MESSAGES.unableToMarkUnresolvable(5)}: ${QUERY_MESSAGES.alreadyClosed}`;
    renderTab({
      imageQueries: [makeQuery({ actions: ['unresolvable'] })],
      replies: { 'PATCH /api/queries/5/unresolvable': { status: 409, body: { success: false, message } } },
    });
    fireEvent.click(within(await card(5)).getByRole('button', { name: 'Mark Unresolvable' }));
    const dialog = await screen.findByRole('dialog', { name: 'Mark Unresolvable' });
    const submit = within(dialog).getByRole('button', { name: 'Mark Unresolvable' });
    expect(submit.hasAttribute('disabled')).toBe(true);
    fireEvent.change(within(dialog).getByLabelText('Reason'), { target: { value: 'Slide lost' } });
    fireEvent.click(submit);
    expect((await within(dialog).findByRole('alert')).textContent).toBe(message);
  });

  it('Close Query takes an optional text; Cancel Query confirms and closes with an empty detail', async () => {
    const q = makeQuery({ actions: ['close'] });
    const { calls } = renderTab({
      imageQueries: [q, makeQuery({ id: 6, actions: ['cancel'] })],
      replies: { 'PATCH /api/queries/5/close': actionReply(q), 'PATCH /api/queries/6/close': actionReply(q) },
    });
    fireEvent.click(within(await card(5)).getByRole('button', { name: 'Close Query' }));
    let dialog = await screen.findByRole('dialog', { name: 'Close Query' });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Close Query' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(calls.find((c) => c.path === '/api/queries/5/close')?.body).toEqual({
      queryId: 5,
      detailedResolutionText: '',
    });
    fireEvent.click(within(await card(6)).getByRole('button', { name: 'Cancel Query' }));
    dialog = await screen.findByRole('dialog', { name: 'Cancel Query' });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel Query' }));
    await waitFor(() => expect(calls.some((c) => c.path === '/api/queries/6/close')).toBe(true));
    expect(calls.find((c) => c.path === '/api/queries/6/close')?.body).toEqual({
      queryId: 6,
      detailedResolutionText: '',
    });
  });

  it('Follow-up date sends the days until the chosen date with the last reminder’s id', async () => {
    const q = makeQuery({ actions: ['followUp'], lastQueryReminderId: 71, latestFollowUpOnDt: '2020-01-01' });
    const { calls } = renderTab({ imageQueries: [q], replies: { 'POST /api/queries/5/reminder': actionReply(q) } });
    fireEvent.click(within(await card(5)).getByRole('button', { name: 'Follow-up date' }));
    const dialog = await screen.findByRole('dialog', { name: 'Follow-up date' });
    const input = within(dialog).getByLabelText<HTMLInputElement>('Follow up on');
    // The current follow-up is past: the dialog starts 14 days out.
    const day = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
    expect(input.value).toBe(day(14));
    fireEvent.change(input, { target: { value: day(3) } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Submit' }));
    await waitFor(() => expect(calls.some((c) => c.path === '/api/queries/5/reminder')).toBe(true));
    expect(calls.find((c) => c.path === '/api/queries/5/reminder')?.body).toEqual({
      queryId: 5,
      queryReminderId: 71,
      followUpInDays: 3,
    });
  });

  it('Replace image uploads the replacement of the queried image, then the viewer shows the new image', async () => {
    fakeXhr(() => ({ status: 200, headers: { ETag: '"abc"' } }));
    const { calls, onReplaced } = renderTab({
      imageQueries: [makeQuery({ actions: ['replaceImage'] })],
      replies: {
        'POST /api/signed-urls': {
          body: {
            success: true,
            data: {
              urls: [{ fileName: 'new.svs', signedUrl: '/api/storage/u/new.svs?sig=1', s3Key: 'uploads/3/u/new.svs' }],
            },
          },
        },
        'POST /api/images': { body: { success: true, image: { id: 99, name: 'new.svs' } } },
        'POST /api/images/notify-upload': { body: { success: true, message: 'Notified' } },
      },
    });
    fireEvent.click(within(await card(5)).getByRole('button', { name: 'Replace image' }));
    const dialog = await screen.findByRole('dialog', { name: 'Replace image' });
    within(dialog).getByText('slide-1.svs');
    const input = dialog.querySelector<HTMLInputElement>('input[type="file"]')!;
    fireEvent.change(input, { target: { files: [new File([new Uint8Array(10)], 'new.svs')] } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Upload' }));
    await waitFor(() => expect(onReplaced).toHaveBeenCalledWith(99, 5));
    expect(calls.find((c) => c.path === '/api/images')?.body).toMatchObject({ imageToReplaceId: 1 });
  });
});
