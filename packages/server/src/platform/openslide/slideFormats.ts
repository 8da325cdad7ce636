import {
  acceptedImageExtensions,
  hasImageExtension,
  openSlideFormatOf,
  openSlideMissing,
  unsupportedFileType,
} from '@lamina/domain';
import { openSlideLibrary } from './openslide.js';

/** The image extensions this process reads: every one, less OpenSlide's where the library is missing. */
export function serverImageExtensions(): string[] {
  return acceptedImageExtensions({ openslide: openSlideLibrary().available });
}

/**
 * Why this server refuses an image file name at upload (signed URLs, multipart, registration), or
 * null: an extension Lamina does not read at all, or a vendor format whose reader (OpenSlide) is not
 * installed here — the message names the package that enables it.
 */
export function imageFileNameError(fileName: string): string | null {
  if (!hasImageExtension(fileName)) return unsupportedFileType(fileName, serverImageExtensions());
  const vendor = openSlideFormatOf(fileName);
  if (vendor && !openSlideLibrary().available) return openSlideMissing(fileName, vendor.label);
  return null;
}
