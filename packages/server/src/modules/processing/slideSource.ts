import sharp from 'sharp';
import path from 'node:path';
import { IMAGE_MESSAGES, imageExtensionOf, openSlideFormatOf, openSlideMissing } from '@lamina/domain';
import { detectVendor, openSlideLibrary, OpenSlideError } from '../../platform/openslide/openslide.js';
import { CorruptTiffError, NotTiffError, readTiffStructure } from './tiffStructure.js';
import { describeSlide, SlideRejectedError, type SlideInfo } from './slideInfo.js';
import { checkDecodedSlideLimits, checkSlideLimits, type SlideLimits } from './slideLimits.js';
import { buildPyramid, DecodeError, extractAssociated, PYRAMID_QUALITY, type PyramidOptions } from './pyramid.js';
import { OpenSlideSource } from './openSlideSource.js';
import { fileHead, findArchivedSlide, isZip, unpackArchive } from './slideArchive.js';
import { BlockPassError, writeDecodedPyramid, type RegionSource } from './blockPyramid.js';
import { isDicomFile, openDicomSeries } from './dicom/index.js';

/**
 * The slide of an upload, whatever its format, as the worker needs it (issue 31): what to store of
 * it, its serving pyramid, its label and macro. Three readers stand behind it:
 * - Lamina's own TIFF readers for Aperio SVS and generic TIFF (the specification's formats; faster
 *   than OpenSlide for them, and the JPEG 2000 path: pyramid.ts);
 * - OpenSlide for the vendor formats (openSlideSource.ts), chosen by OpenSlide's own vendor
 *   detection so a Philips or Ventana `.tiff` goes to it too;
 * - the DICOM WSI reader for DICOM series (dicom/): a `.dcm` file, or the `.dcm` files of a zip.
 * Archives (`.zip`) are unpacked first (slideArchive.ts).
 */
export interface SlideSource {
  /** What the image row stores (source_format: aperio, generic-tiff, plain-tiff, hamamatsu, mirax, …). */
  readonly info: StoredSlideInfo;
  buildPyramid(target: string, onProgress: (fraction: number) => void, options: PyramidOptions): Promise<void>;
  /** The label (PNG) or macro (JPEG) image, or null when the slide has none. */
  associated(kind: 'label' | 'macro'): Promise<Buffer | null>;
  close(): Promise<void>;
}

export type StoredSlideInfo = Pick<
  SlideInfo,
  'width' | 'height' | 'levels' | 'mpp' | 'objectivePower' | 'zStackSize'
> & { format: string; compression: number | null };

/** Vendors OpenSlide names that Lamina's own readers serve (the rest go to OpenSlide). */
const OWN_READER_VENDORS = new Set(['aperio', 'generic-tiff']);

/**
 * Opens the upload at `file` (named as the user named it: `fileName` decides nothing by itself but
 * the message when OpenSlide is missing). `work` is the job's scratch folder (archives unpack there).
 * Throws SlideRejectedError for a slide refused for what it is.
 */
export async function openSlideSource(
  file: string,
  fileName: string,
  work: string,
  fileSize: number,
  limits: SlideLimits,
): Promise<SlideSource> {
  const head = await fileHead(file);
  if (isZip(head)) {
    const files = await unpackArchive(file, path.join(work, 'archive'));
    const found = await findArchivedSlide(files);
    if (found.kind === 'dicom') return openDicom(found.files, fileSize, limits);
    return openVendor(
      found.index,
      fileName,
      found.kind === 'mirax' ? 'MIRAX (.mrxs)' : 'Hamamatsu VMS',
      fileSize,
      limits,
    );
  }
  if (isDicomFile(head)) return openDicom([file], fileSize, limits);
  // A name that promises an archive or DICOM, with other content: said so, rather than 'not a TIFF'.
  const extension = imageExtensionOf(fileName);
  if (extension === '.zip') throw new SlideRejectedError(`${fileName} is not a zip archive`);
  if (extension === '.dcm') throw new SlideRejectedError(`${fileName} is not a DICOM file (no DICM preamble)`);
  const vendorFormat = openSlideFormatOf(fileName);
  if (vendorFormat) return openVendor(file, fileName, vendorFormat.label, fileSize, limits);
  // A TIFF by extension: OpenSlide's detection sends vendor TIFFs (Philips, Ventana, Leica,
  // Hamamatsu, Trestle) to it; Aperio and generic TIFF stay with Lamina's readers.
  if (openSlideLibrary().available) {
    const vendor = detectVendor(file);
    if (vendor && !OWN_READER_VENDORS.has(vendor)) return openVendor(file, fileName, vendor, fileSize, limits);
  }
  return openTiff(file, fileSize, limits);
}

async function openTiff(file: string, fileSize: number, limits: SlideLimits): Promise<SlideSource> {
  let info: SlideInfo;
  try {
    const structure = await readTiffStructure(file);
    checkSlideLimits(structure, fileSize, limits);
    info = describeSlide(structure);
  } catch (error) {
    if (error instanceof NotTiffError) throw new SlideRejectedError(`${IMAGE_MESSAGES.notATiff} (${error.message})`);
    if (error instanceof CorruptTiffError)
      throw new SlideRejectedError(`The TIFF structure is damaged (${error.message})`);
    throw error;
  }
  return {
    info,
    buildPyramid: (target, onProgress, options) => buildPyramid(file, target, info, onProgress, options),
    associated: async (kind) => {
      const page = kind === 'label' ? info.labelPage : info.macroPage;
      return page === null ? null : extractAssociated(file, page, kind === 'label' ? 'png' : 'jpeg');
    },
    close: async () => undefined,
  };
}

async function openVendor(
  file: string,
  fileName: string,
  format: string,
  fileSize: number,
  limits: SlideLimits,
): Promise<SlideSource> {
  if (!openSlideLibrary().available) throw new SlideRejectedError(openSlideMissing(fileName, format));
  let source: OpenSlideSource;
  try {
    source = OpenSlideSource.open(file);
  } catch (error) {
    if (error instanceof OpenSlideError)
      throw new SlideRejectedError(`The ${format} slide could not be opened (${error.message})`);
    throw error;
  }
  const { description } = source;
  return decodedSlideSource(
    {
      format: description.vendor,
      source,
      levels: description.levels,
      mpp: description.mpp,
      objectivePower: description.objectivePower,
      associated: (kind) => source.associated(kind),
      close: () => source.close(),
      readFailure: (error) =>
        error instanceof OpenSlideError
          ? `The ${format} slide's image data could not be read (${error.message})`
          : null,
    },
    fileSize,
    limits,
  );
}

/** A DICOM WSI series (one file, or the DICOM files of an archive): dicom/ reads it. */
async function openDicom(files: string[], fileSize: number, limits: SlideLimits): Promise<SlideSource> {
  const slide = await openDicomSeries(files);
  const { info } = slide;
  return decodedSlideSource(
    {
      format: 'dicom',
      source: slide,
      levels: info.levels,
      mpp: info.mpp,
      objectivePower: info.objectivePower,
      // DICOM calls the macro photograph of the glass the OVERVIEW.
      associated: (kind) => slide.associated(kind === 'macro' ? 'overview' : 'label'),
      close: () => slide.close(),
    },
    fileSize,
    limits,
  );
}

/** A slide whose level 0 the worker decodes itself (OpenSlide, DICOM): what it stores of it, and its reads. */
interface DecodedSlide {
  /** source_format: the vendor, or 'dicom'. */
  format: string;
  source: RegionSource;
  levels: number;
  mpp: number | null;
  objectivePower: number | null;
  associated(kind: 'label' | 'macro'): Promise<{ rgb: Buffer; width: number; height: number } | null>;
  close(): Promise<void>;
  /** The failure reason of the reader's own error for unreadable pixels; null for any other error. */
  readFailure?(error: unknown): string | null;
}

/**
 * The SlideSource of a {@link DecodedSlide}, once its size passes the limits (else it is closed and
 * refused): its pyramid through writeDecodedPyramid at the pyramid quality, with the slide's pixel
 * size in the resolution tags; label PNG, macro JPEG.
 */
async function decodedSlideSource(slide: DecodedSlide, fileSize: number, limits: SlideLimits): Promise<SlideSource> {
  const { source } = slide;
  try {
    checkDecodedSlideLimits(source.width, source.height, fileSize, limits);
  } catch (error) {
    await slide.close();
    throw error;
  }
  const pixelsPerMm = slide.mpp ? 1000 / slide.mpp : undefined;
  return {
    info: {
      format: slide.format,
      width: source.width,
      height: source.height,
      levels: slide.levels,
      mpp: slide.mpp,
      objectivePower: slide.objectivePower,
      zStackSize: 1,
      compression: null,
    },
    buildPyramid: async (target, onProgress, options) => {
      try {
        await writeDecodedPyramid(source, target, {
          quality: PYRAMID_QUALITY,
          blockSize: options.blockSize,
          onProgress,
          pixelsPerCm: pixelsPerMm ? pixelsPerMm * 10 : undefined,
          deadline: options.deadline,
        });
      } catch (error) {
        if (options.deadline?.expired) throw options.deadline.error();
        const reason = slide.readFailure?.(error);
        if (reason) throw new DecodeError(reason);
        if (error instanceof BlockPassError)
          throw new DecodeError(`The image data could not be encoded (${error.message})`);
        throw error;
      }
    },
    associated: async (kind) => encodeAssociated(await slide.associated(kind), kind),
    close: () => slide.close(),
  };
}

/** An associated image for storage: the label as PNG (lossless), the macro as JPEG. */
async function encodeAssociated(
  image: { rgb: Buffer; width: number; height: number } | null,
  kind: 'label' | 'macro',
): Promise<Buffer | null> {
  if (!image) return null;
  const pipeline = sharp(image.rgb, { raw: { width: image.width, height: image.height, channels: 3 } });
  return kind === 'label' ? pipeline.png().toBuffer() : pipeline.jpeg({ quality: 90 }).toBuffer();
}
