/** DICOM whole-slide images (Supplement 145) for the processing worker: see dicomSlide.ts. */
export { DicomRejectedError, isDicomFile } from './dicomFile.js';
export {
  DicomSlide,
  openDicomSeries,
  type AssociatedImage,
  type DicomOpenOptions,
  type DicomSlideInfo,
} from './dicomSlide.js';
