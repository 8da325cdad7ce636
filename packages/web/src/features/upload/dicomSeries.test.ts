import { unzipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { readBlob, withBlobArrayBuffer } from './blobBytes';
import {
  bundleSeries,
  FALLBACK_SERIES_NAME,
  groupDicomSeries,
  isDicomSeries,
  SeriesBundleError,
  seriesZipName,
  storedZipSize,
  type DicomSeries,
} from './dicomSeries';
import { UploadAbortedError } from './putWithProgress';

withBlobArrayBuffer();

/**
 * A small file of distinct bytes. The bytes are only carried into the .zip and compared after,
 * never decoded as DICOM, so any bytes do here; distinct ones per file show a mix-up.
 */
function file(name: string, size: number, seed = 1): File {
  const bytes = Uint8Array.from({ length: size }, (_, i) => (i * 31 + seed * 17) & 0xff);
  return new File([bytes], name);
}

const never = new AbortController().signal;

describe('seriesZipName', () => {
  it('is the common beginning of the names, without the level word: CMU-1-level-0/1 → CMU-1.zip', () => {
    expect(seriesZipName(['CMU-1-level-0.dcm', 'CMU-1-level-1.dcm', 'CMU-1-level-2.dcm'])).toBe('CMU-1.zip');
    expect(seriesZipName(['CMU-1.dcm', 'CMU-1_label.DCM', 'CMU-1 overview.dcm'])).toBe('CMU-1.zip');
    expect(seriesZipName(['biopsy 7_instance_1.dcm', 'biopsy 7_instance_2.dcm'])).toBe('biopsy 7.zip');
  });

  it('cuts back to whole words and numbers, not into them', () => {
    // 'slide1' would name the series after one of its files' numbers.
    expect(seriesZipName(['slide10.dcm', 'slide11.dcm'])).toBe('slide.zip');
    expect(seriesZipName(['CMU-1-lung.dcm', 'CMU-1-lymph.dcm'])).toBe('CMU-1.zip');
    expect(seriesZipName(['S-12-3.dcm', 'S-12-4.dcm'])).toBe('S-12.zip');
  });

  it("is 'dicom-series.zip' when the names share nothing that names the slide", () => {
    expect(seriesZipName(['1.dcm', '2.dcm'])).toBe(FALLBACK_SERIES_NAME);
    expect(seriesZipName(['level-0.dcm', 'level-1.dcm'])).toBe(FALLBACK_SERIES_NAME);
    expect(seriesZipName(['a.dcm', 'b.dcm'])).toBe(FALLBACK_SERIES_NAME);
    expect(seriesZipName(['__-1.dcm', '__-2.dcm'])).toBe(FALLBACK_SERIES_NAME);
  });

  it('keeps a safe file name: no path or reserved characters, no leading dot, bounded length', () => {
    expect(seriesZipName(['Case:7*?-level-0.dcm', 'Case:7*?-level-1.dcm'])).toBe('Case_7_.zip');
    expect(seriesZipName(['.hidden-a.dcm', '.hidden-b.dcm'])).toBe('hidden.zip');
    const long = 'x'.repeat(300);
    expect(seriesZipName([`${long}-1.dcm`, `${long}-2.dcm`])).toBe(`${'x'.repeat(200)}.zip`);
  });
});

describe('groupDicomSeries', () => {
  it('makes two or more .dcm files one series in the place of the first, the others as they are', () => {
    const svs = file('other.svs', 5);
    const dcm = [file('CMU-1-level-0.dcm', 5), file('CMU-1-level-1.DCM', 5), file('CMU-1-level-2.dcm', 5)];
    const items = groupDicomSeries([dcm[0]!, svs, dcm[1]!, dcm[2]!]);
    expect(items).toHaveLength(2);
    const [series, other] = items;
    expect(isDicomSeries(series!) && series).toEqual({ name: 'CMU-1.zip', files: dcm });
    expect(other).toBe(svs);
  });

  it('leaves a single .dcm as it is (a one-instance series the server reads)', () => {
    const one = file('single.dcm', 5);
    const svs = file('other.svs', 5);
    expect(groupDicomSeries([one, svs])).toEqual([one, svs]);
  });
});

describe('bundleSeries', () => {
  it('writes the files at the root of a stored .zip, with their bytes, reporting the bytes read', async () => {
    const files = [file('CMU-1-level-0.dcm', 3000, 1), file('CMU-1-level-1.dcm', 700, 2), file('empty.dcm', 0, 3)];
    const series: DicomSeries = { name: 'CMU-1.zip', files };
    const seen: [number, number][] = [];
    const zip = await bundleSeries(series, (loaded, total) => seen.push([loaded, total]), never);

    expect(zip.name).toBe('CMU-1.zip');
    expect(zip.type).toBe('application/zip');
    // The size the upload decides on (signed PUT or multipart) before the .zip is made.
    expect(zip.size).toBe(storedZipSize(files));
    const bytes = await readBlob(zip);
    // Local header of the first entry: compression method 0 (stored).
    expect(new DataView(bytes.buffer).getUint32(0, true)).toBe(0x04034b50);
    expect(new DataView(bytes.buffer).getUint16(8, true)).toBe(0);
    const entries = unzipSync(bytes);
    expect(Object.keys(entries)).toEqual(['CMU-1-level-0.dcm', 'CMU-1-level-1.dcm', 'empty.dcm']);
    for (const f of files) expect(entries[f.name]).toEqual(await readBlob(f));
    expect(seen[0]).toEqual([0, 3700]);
    expect(seen.at(-1)).toEqual([3700, 3700]);
  });

  it('stops when the upload is stopped', async () => {
    const abort = new AbortController();
    abort.abort();
    const series: DicomSeries = { name: 's.zip', files: [file('a.dcm', 10), file('b.dcm', 10)] };
    await expect(bundleSeries(series, () => undefined, abort.signal)).rejects.toBeInstanceOf(UploadAbortedError);
  });

  it('refuses a series over the 4 GB a .zip without ZIP64 records holds, before reading it', async () => {
    const big = file('big-level-0.dcm', 1);
    // jsdom cannot hold 4 GB: only the size the check reads is made large.
    Object.defineProperty(big, 'size', { value: 2 ** 32 });
    const series: DicomSeries = { name: 'big.zip', files: [big, file('big-level-1.dcm', 1)] };
    const attempt = bundleSeries(series, () => undefined, never);
    await expect(attempt).rejects.toBeInstanceOf(SeriesBundleError);
    await expect(attempt).rejects.toThrow(/big\.zip: the 2 DICOM files together are over 4 GB/);
  });
});
