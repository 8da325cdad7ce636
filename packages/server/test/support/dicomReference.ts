import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';

/**
 * The DICOM fixtures' references (fixtures/dicom/reference/: level 0 decoded by DCMTK or pydicom +
 * Pillow, reduced to block means by make_references.py) and the comparisons the DICOM tests make.
 */

export const DICOM_FIXTURES = fileURLToPath(new URL('../fixtures/dicom/', import.meta.url));

export interface Rgb {
  data: Buffer;
  width: number;
  height: number;
}

/** Per-channel means of each block x block square, rounded half up, as make_references.py computes them. */
export function blockMeans(image: Rgb, block: number): Rgb {
  const width = Math.ceil(image.width / block);
  const height = Math.ceil(image.height / block);
  const data = Buffer.alloc(width * height * 3);
  for (let by = 0; by < height; by++)
    for (let bx = 0; bx < width; bx++) {
      const sums = [0, 0, 0];
      let count = 0;
      for (let y = by * block; y < Math.min((by + 1) * block, image.height); y++)
        for (let x = bx * block; x < Math.min((bx + 1) * block, image.width); x++) {
          for (let c = 0; c < 3; c++) sums[c]! += image.data[(y * image.width + x) * 3 + c]!;
          count++;
        }
      for (let c = 0; c < 3; c++) data[(by * width + bx) * 3 + c] = Math.floor(sums[c]! / count + 0.5);
    }
  return { data, width, height };
}

/** A reference image of fixtures/dicom/reference/ as RGB. */
export async function dicomReference(name: string): Promise<Rgb> {
  const { data, info } = await sharp(path.join(DICOM_FIXTURES, 'reference', name))
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** Mean and largest absolute difference per channel of two images of one size. */
export function differences(a: Rgb, b: Rgb): { mean: number[]; max: number[] } {
  if (a.width !== b.width || a.height !== b.height)
    throw new Error(`The images differ in size: ${a.width} x ${a.height} and ${b.width} x ${b.height}`);
  const sums = [0, 0, 0];
  const max = [0, 0, 0];
  for (let i = 0; i < a.data.length; i++) {
    const d = Math.abs(a.data[i]! - b.data[i]!);
    sums[i % 3]! += d;
    max[i % 3] = Math.max(max[i % 3]!, d);
  }
  return { mean: sums.map((s) => s / (a.width * a.height)), max };
}

/** A rectangle of an RGB image, as its own row-major RGB bytes. */
export function crop(image: Rgb, left: number, top: number, width: number, height: number): Buffer {
  const out = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++)
    image.data.copy(
      out,
      y * width * 3,
      ((top + y) * image.width + left) * 3,
      ((top + y) * image.width + left + width) * 3,
    );
  return out;
}
