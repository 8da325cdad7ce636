import { cleanup, render, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfirmDialog } from './ConfirmDialog';

afterEach(cleanup);

describe('ConfirmDialog', () => {
  it('opens with its action focused (issue 20): Enter confirms, Escape cancels', async () => {
    render(
      <ConfirmDialog isOpen title="Confirm Study Access" confirmText="Confirm" onConfirm={() => {}} onClose={() => {}}>
        <p>Give reader2 access?</p>
      </ConfirmDialog>,
    );
    await waitFor(() => expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Confirm' })));
  });
});
