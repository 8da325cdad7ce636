import { afterAll, beforeAll } from 'vitest';

/** A Blob's bytes through FileReader, which jsdom has (its Blob has no arrayBuffer() nor stream()). */
export function readBlob(blob: Blob): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(new Uint8Array(reader.result as ArrayBuffer));
    reader.onerror = () => reject(reader.error ?? new Error('FileReader failed'));
    reader.readAsArrayBuffer(blob);
  });
}

/**
 * Gives jsdom's Blob the arrayBuffer() every browser has (bundleSeries reads slices with it), for
 * the tests of the calling file; removed after them, as the worker's other files share the document.
 */
export function withBlobArrayBuffer(): void {
  const had = Object.prototype.hasOwnProperty.call(Blob.prototype, 'arrayBuffer');
  beforeAll(() => {
    if (had) return;
    Object.defineProperty(Blob.prototype, 'arrayBuffer', {
      configurable: true,
      value(this: Blob) {
        return readBlob(this).then((bytes) => bytes.buffer);
      },
    });
  });
  afterAll(() => {
    if (!had) Reflect.deleteProperty(Blob.prototype, 'arrayBuffer');
  });
}
