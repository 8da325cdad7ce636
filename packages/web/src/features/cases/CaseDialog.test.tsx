import { CASE_MESSAGES, ROLE_PERMISSIONS, type CaseView } from '@lamina/domain';
import { cleanup, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setCsrfToken } from '../../api/client';
import { makeCase, makeStudy, makeUserAs } from '../../test/fixtures';
import { mockFetch } from '../../test/mockFetch';
import { renderRoutes } from '../../test/render';
import { CaseDialog } from './CaseDialog';

const LABTECH = makeUserAs('LabTech', [...ROLE_PERMISSIONS.LabTech]);
const STUDY = makeStudy({ id: 3 });
const IMAGE = { id: 7, name: 'S1001_A.tif' } as CaseView['images'][number];

function renderDialog(existing: CaseView) {
  const mock = mockFetch({
    'GET /api/studies/3/cases/images': { body: { success: true, images: [] } },
    'GET /api/studies/3/readers': { body: { success: true, readers: [] } },
  });
  renderRoutes([{ path: '/', element: <CaseDialog study={STUDY} existing={existing} onClose={() => {}} /> }], {
    path: '/',
    user: LABTECH,
  });
  return mock;
}

beforeEach(() => setCsrfToken('token'));
afterEach(cleanup);

describe('Edit Case: the image search (issue 29 item 13; doc 2 §4)', () => {
  it('is disabled for a case past QC, with the reason, and its images cannot be removed', async () => {
    const { calls } = renderDialog(makeCase({ status: 'PROCESSED', images: [IMAGE] }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit Case' });
    const search = within(dialog).getByPlaceholderText('Search images waiting for a case');
    expect(search).toHaveProperty('disabled', true);
    expect(search.getAttribute('aria-description')).toBe(CASE_MESSAGES.notAssignableStatus);
    expect(within(dialog).queryByRole('menu', { name: 'Images waiting for a case' })).toBeNull();
    expect(within(dialog).getByLabelText('S1001_A.tif').querySelector('button')).toBeNull();
    expect(calls.some((c) => c.path === '/api/studies/3/cases/images')).toBe(false);
  });

  it('is offered while the case takes images (Pending Lab QC)', async () => {
    renderDialog(makeCase({ status: 'PENDING_LAB_QC', images: [IMAGE] }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit Case' });
    expect(within(dialog).getByPlaceholderText('Search images waiting for a case')).toHaveProperty('disabled', false);
    within(dialog).getByRole('menu', { name: 'Images waiting for a case' });
    expect(within(dialog).getByLabelText('S1001_A.tif').querySelector('button')).not.toBeNull();
  });
});
