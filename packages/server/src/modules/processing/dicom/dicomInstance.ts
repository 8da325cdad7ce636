import type { DataSet } from 'dicom-parser';
import { DicomRejectedError, readDataset, TRANSFER_SYNTAXES, WSI_SOP_CLASS, type TransferSyntax } from './dicomFile.js';
import { plausibleMpp } from '../slideInfo.js';

/**
 * What the reader takes from one WSI instance's dataset (PS3.3 A.32.8, Supplement 145): identity,
 * flavour (VOLUME, LABEL, OVERVIEW), frame geometry, pixel coding and the position of every frame.
 */
export interface DicomInstance {
  file: string;
  name: string;
  study: string;
  series: string;
  frameOfReference: string | null;
  container: string | null;
  instanceNumber: number;
  transferSyntax: TransferSyntax;
  /** ImageType value 3: VOLUME, LABEL, OVERVIEW, THUMBNAIL. */
  flavour: string;
  rows: number;
  columns: number;
  frames: number;
  totalColumns: number;
  totalRows: number;
  samplesPerPixel: number;
  photometric: string;
  planarConfiguration: number;
  organization: 'TILED_FULL' | 'TILED_SPARSE';
  /** Optical path identifiers in the order of OpticalPathSequence. */
  opticalPaths: string[];
  /** NumberOfOpticalPaths (else the sequence's length). */
  opticalPathCount: number;
  focalPlanes: number;
  /** The first frame's number in its concatenation (ConcatenationFrameOffsetNumber), 0 otherwise. */
  frameOffset: number;
  /** TILED_SPARSE: per frame, its 1-based position in the total pixel matrix, optical path and z. */
  positions: { column: number; row: number; path: string | null; z: number }[] | null;
  /** µm per pixel (column spacing) from the shared pixel measures, when given. */
  mpp: number | null;
  objectivePower: number | null;
  pixelData: { offset: number; length: number };
  fileSize: number;
}

type Item = DataSet;

function items(dataSet: DataSet, tag: string): Item[] {
  return (dataSet.elements[tag]?.items ?? []).flatMap((i) => (i.dataSet ? [i.dataSet] : []));
}

/** The first item's dataset of a sequence, or of a sequence inside it (`path` of tags). */
function item(dataSet: DataSet | undefined, ...path: string[]): Item | undefined {
  let at = dataSet;
  for (const tag of path) at = at ? items(at, tag)[0] : undefined;
  return at;
}

const TAG = {
  sopClass: 'x00080016',
  imageType: 'x00080008',
  study: 'x0020000d',
  series: 'x0020000e',
  instanceNumber: 'x00200013',
  frameOfReference: 'x00200052',
  container: 'x00400512',
  samplesPerPixel: 'x00280002',
  photometric: 'x00280004',
  planarConfiguration: 'x00280006',
  frames: 'x00280008',
  rows: 'x00280010',
  columns: 'x00280011',
  bitsAllocated: 'x00280100',
  pixelRepresentation: 'x00280103',
  totalColumns: 'x00480006',
  totalRows: 'x00480007',
  organization: 'x00209311',
  concatenationOffset: 'x00209228',
  opticalPathSequence: 'x00480105',
  opticalPathId: 'x00480106',
  objectiveLensPower: 'x00480112',
  numberOfOpticalPaths: 'x00480302',
  focalPlanes: 'x00480303',
  shared: 'x52009229',
  perFrame: 'x52009230',
  pixelMeasures: 'x00289110',
  pixelSpacing: 'x00280030',
  planePositionSlide: 'x0048021a',
  columnPosition: 'x0048021e',
  rowPosition: 'x0048021f',
  zOffset: 'x0040074a',
  opticalPathIdentification: 'x00480207',
} as const;

/** Reads and checks one instance: a WSI image of 8-bit samples in a transfer syntax the reader decodes. */
export async function readInstance(file: string): Promise<DicomInstance> {
  const name = file.split('/').pop() ?? file;
  const { dataSet: ds, transferSyntax, pixelData, size } = await readDataset(file);
  const sopClass = ds.string(TAG.sopClass) ?? ds.string('x00020002') ?? '';
  if (sopClass !== WSI_SOP_CLASS)
    throw new DicomRejectedError(
      `${name} is not a whole slide image (SOP class ${sopClass || 'missing'}, expected VL Whole Slide Microscopy Image Storage ${WSI_SOP_CLASS})`,
    );
  if (!(transferSyntax in TRANSFER_SYNTAXES))
    throw new DicomRejectedError(
      `${name} uses transfer syntax ${transferSyntax || '(none)'}, which Lamina does not decode (supported: ${Object.entries(
        TRANSFER_SYNTAXES,
      )
        .map(([uid, label]) => `${label} ${uid}`)
        .join(', ')})`,
    );
  if (!pixelData) throw new DicomRejectedError(`${name} has no pixel data`);
  const required = (tag: string, label: string) => {
    const value = ds.uint16(tag) ?? ds.uint32(tag);
    if (!value) throw new DicomRejectedError(`${name} has no ${label}`);
    return value;
  };
  const rows = required(TAG.rows, 'Rows');
  const columns = required(TAG.columns, 'Columns');
  const samplesPerPixel = ds.uint16(TAG.samplesPerPixel) ?? 0;
  const photometric = ds.string(TAG.photometric) ?? '';
  const bits = ds.uint16(TAG.bitsAllocated) ?? 0;
  if (bits !== 8 || (ds.uint16(TAG.pixelRepresentation) ?? 0) !== 0)
    throw new DicomRejectedError(`${name} has ${bits}-bit samples; only unsigned 8-bit samples are supported`);
  const colour = samplesPerPixel === 3 && /^(RGB|YBR_FULL|YBR_FULL_422|YBR_ICT|YBR_RCT)$/.test(photometric);
  const grey = samplesPerPixel === 1 && photometric === 'MONOCHROME2';
  if (!colour && !grey)
    throw new DicomRejectedError(
      `${name} has ${samplesPerPixel} samples per pixel as ${photometric || '(no photometric interpretation)'}; only RGB/YBR colour or MONOCHROME2 is supported`,
    );
  const shared = item(ds, TAG.shared);
  const perFrame = items(ds, TAG.perFrame);
  const frames = ds.intString(TAG.frames) ?? 1;
  const organization = ds.string(TAG.organization);
  const sparse =
    organization === 'TILED_SPARSE' ||
    (organization !== 'TILED_FULL' && perFrame.length > 0 && item(perFrame[0], TAG.planePositionSlide) !== undefined);
  const pathItems = items(ds, TAG.opticalPathSequence);
  const opticalPaths = pathItems.map((p, i) => p.string(TAG.opticalPathId) ?? String(i + 1));
  const sharedPath = item(shared, TAG.opticalPathIdentification)?.string(TAG.opticalPathId) ?? null;
  let positions: DicomInstance['positions'] = null;
  if (sparse) {
    if (perFrame.length < frames)
      throw new DicomRejectedError(
        `${name} is TILED_SPARSE but gives the position of ${perFrame.length} of ${frames} frames`,
      );
    positions = perFrame.slice(0, frames).map((group, f) => {
      const plane = item(group, TAG.planePositionSlide);
      const column = plane?.int32(TAG.columnPosition);
      const row = plane?.int32(TAG.rowPosition);
      if (column === undefined || row === undefined)
        throw new DicomRejectedError(`${name} gives no position in the total pixel matrix for frame ${f + 1}`);
      const path = item(group, TAG.opticalPathIdentification)?.string(TAG.opticalPathId) ?? sharedPath;
      return { column, row, path, z: plane?.floatString(TAG.zOffset) ?? 0 };
    });
  }
  const spacing = item(shared, TAG.pixelMeasures)?.floatString(TAG.pixelSpacing, 1);
  const mpp = spacing && Number.isFinite(spacing) ? Math.round(spacing * 1000 * 1e6) / 1e6 : null;
  const power = pathItems[0]?.floatString(TAG.objectiveLensPower);
  return {
    file,
    name,
    study: ds.string(TAG.study) ?? '',
    series: ds.string(TAG.series) ?? '',
    frameOfReference: ds.string(TAG.frameOfReference) ?? null,
    container: ds.string(TAG.container) ?? null,
    instanceNumber: ds.intString(TAG.instanceNumber) ?? 0,
    transferSyntax: transferSyntax as TransferSyntax,
    flavour: (ds.string(TAG.imageType, 2) ?? '').toUpperCase(),
    rows,
    columns,
    frames,
    totalColumns: ds.uint32(TAG.totalColumns) ?? columns,
    totalRows: ds.uint32(TAG.totalRows) ?? rows,
    samplesPerPixel,
    photometric,
    planarConfiguration: ds.uint16(TAG.planarConfiguration) ?? 0,
    organization: sparse ? 'TILED_SPARSE' : 'TILED_FULL',
    opticalPaths: opticalPaths.length > 0 ? opticalPaths : ['1'],
    opticalPathCount: ds.uint32(TAG.numberOfOpticalPaths) ?? Math.max(1, opticalPaths.length),
    focalPlanes: ds.uint32(TAG.focalPlanes) ?? 1,
    frameOffset: ds.uint32(TAG.concatenationOffset) ?? 0,
    positions,
    mpp: plausibleMpp(mpp),
    objectivePower: power && power > 0 ? power : null,
    pixelData,
    fileSize: size,
  };
}
