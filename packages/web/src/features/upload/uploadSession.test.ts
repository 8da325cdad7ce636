import { SPEC_IMAGE_EXTENSIONS } from '@lamina/domain';
import { describe, expect, it } from 'vitest';
import { checkSelection } from './uploadSession';

const file = (name: string) => new File([new Uint8Array(10)], name);
const names = (files: File[]) => files.map((f) => f.name);

describe('checkSelection', () => {
  it("keeps the files of the server's extensions (any case), refusing the others with its list", () => {
    const extensions = [...SPEC_IMAGE_EXTENSIONS, '.ndpi', '.zip'];
    const { accepted, errors } = checkSelection(
      [file('a.NDPI'), file('b.svs'), file('c.scn'), file('mirax.zip'), file('notes.txt')],
      extensions,
    );
    expect(names(accepted)).toEqual(['a.NDPI', 'b.svs', 'mirax.zip']);
    expect(errors).toEqual([
      'File type not supported: c.scn. Accepted files: .svs, .tif, .tiff, .ndpi, .zip',
      'File type not supported: notes.txt. Accepted files: .svs, .tif, .tiff, .ndpi, .zip',
    ]);
  });

  it('refuses a vendor format the server does not list, and a bare extension', () => {
    const { accepted, errors } = checkSelection(
      [file('slide.ndpi'), file('.svs'), file('ok.tif')],
      SPEC_IMAGE_EXTENSIONS,
    );
    expect(names(accepted)).toEqual(['ok.tif']);
    expect(errors).toEqual([
      'File type not supported: slide.ndpi. Accepted files: .svs, .tif, .tiff',
      'File type not supported: .svs. Accepted files: .svs, .tif, .tiff',
    ]);
  });
});
