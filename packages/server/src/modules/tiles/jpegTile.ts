/**
 * Turning an abbreviated JPEG tile stored in a TIFF (compression 7) into a complete JPEG file
 * without decoding it: SOI + the shared tables of tag 347 (without their own SOI/EOI) + the tile's
 * stream (without its SOI). The scan data is copied byte for byte.
 */

const SOI = Buffer.from([0xff, 0xd8]);

/**
 * An Adobe APP14 segment with transform 0: tells decoders that the three components are R, G, B
 * as stored, not YCbCr. Aperio and some other writers store RGB JPEG tiles (TIFF photometric 2)
 * without it, and browsers would otherwise show them in wrong colours.
 */
export const ADOBE_APP14_RGB = Buffer.from([
  0xff, 0xee, 0x00, 0x0e, 0x41, 0x64, 0x6f, 0x62, 0x65, 0x00, 0x64, 0x00, 0x00, 0x00, 0x00, 0x00,
]);

export function startsWithSoi(buf: Buffer, at = 0): boolean {
  return buf.length >= at + 2 && buf[at] === 0xff && buf[at + 1] === 0xd8;
}

/**
 * The bytes that precede a tile's stream (after its SOI is dropped): SOI, the APP14 marker when the
 * TIFF says the components are RGB, then the tables without SOI and EOI.
 */
export function jpegPrefix(tables: Buffer | null, rgbComponents: boolean): Buffer {
  const parts: Buffer[] = [SOI];
  if (rgbComponents) parts.push(ADOBE_APP14_RGB);
  if (tables && tables.length >= 4) {
    let start = 0;
    let end = tables.length;
    if (startsWithSoi(tables)) start = 2;
    if (tables[end - 2] === 0xff && tables[end - 1] === 0xd9) end -= 2;
    parts.push(tables.subarray(start, end));
  }
  return Buffer.concat(parts);
}

/** prefix + the tile's stream without its SOI (one copy). */
export function assembleJpeg(prefix: Buffer, tile: Buffer): Buffer {
  return Buffer.concat([prefix, startsWithSoi(tile) ? tile.subarray(2) : tile]);
}
