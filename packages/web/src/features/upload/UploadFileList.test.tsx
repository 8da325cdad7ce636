import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { UploadFileList } from './UploadFileList';

describe('UploadFileList', () => {
  it("shows a series being bundled as 'Preparing series' with its share read, and what it bundles", () => {
    render(
      <UploadFileList
        files={[
          {
            name: 'CMU-1.zip',
            loaded: 3 * 1024 ** 2,
            total: 8 * 1024 ** 2,
            state: 'preparing',
            note: '3 DICOM files → one series: CMU-1.zip',
          },
          { name: 'slide.svs', loaded: 0, total: 2048, state: 'queued' },
        ]}
      />,
    );
    const rows = screen.getAllByRole('listitem');
    expect(rows[0]?.textContent).toContain('8.0 MB · Preparing series 37%');
    expect(rows[0]?.textContent).toContain('3 DICOM files → one series: CMU-1.zip');
    expect(rows[1]?.textContent).toBe('slide.svs2 KB · Waiting');
    expect(screen.getByRole('progressbar', { name: 'Progress of CMU-1.zip' }).getAttribute('aria-valuenow')).toBe(
      '38', // Blueprint rounds 37.5
    );
  });
});
