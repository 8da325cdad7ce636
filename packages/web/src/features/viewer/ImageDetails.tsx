import { Button } from '@blueprintjs/core';
import { IMAGE_STATUS_LABELS, type ImageStatus } from '@lamina/domain';
import type { ReactNode } from 'react';
import { showToast } from '../../components/appToaster';
import { formatDate } from '../../util/formatDate';

/** One term of a details list; a dash when the value is missing. */
export function Detail({ label, children }: { label: string; children: ReactNode }) {
  return (
    <>
      <dt>{label}</dt>
      <dd>{children ?? '-'}</dd>
    </>
  );
}

async function copyAccession(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    void showToast(`Accession number ${text} copied`);
  } catch {
    void showToast('The accession number could not be copied', 'warning');
  }
}

/** Click to copy (doc 3 §2 image details): lab staff paste it into the LIMS. */
export function AccessionNumber({ value }: { value: string | null }) {
  if (!value) return <>-</>;
  return (
    <button
      type="button"
      className="lamina-link-button"
      title="Copy the accession number"
      onClick={() => void copyAccession(value)}
    >
      {value}
    </button>
  );
}

/** The fields of an image the details box shows (an ImageView or an image of a case). */
export interface ImageDetailsFields {
  id: number;
  name: string;
  uploadedAt: string;
  accessionNumber: string | null;
  biopsyLocation: string | null;
  status: ImageStatus;
}

/**
 * Image details of the Overview tab (doc 3 §2): File Name, Upload Date, Accession Number (click to
 * copy), Anatomical Segment, Image Status. A central reader sees the accession number only.
 * `actions` holds the buttons the user may use (Edit Image, Pass QC).
 */
export function ImageDetails({
  image,
  reader,
  actions,
}: {
  image: ImageDetailsFields;
  reader: boolean;
  actions?: ReactNode;
}) {
  return (
    <section className="lamina-viewer-box" aria-label="Image details">
      <div className="lamina-viewer-box-head">
        <strong>Image details</strong>
      </div>
      <dl className="lamina-details-list">
        {!reader && <Detail label="File Name">{image.name}</Detail>}
        {!reader && <Detail label="Upload Date">{formatDate(image.uploadedAt)}</Detail>}
        <Detail label="Accession Number">
          <AccessionNumber value={image.accessionNumber} />
        </Detail>
        {!reader && <Detail label="Anatomical Segment">{image.biopsyLocation}</Detail>}
        {!reader && <Detail label="Image Status">{IMAGE_STATUS_LABELS[image.status]}</Detail>}
      </dl>
      {actions && <div className="lamina-viewer-box-actions">{actions}</div>}
    </section>
  );
}

/** The Edit Image button of the details box. */
export function EditImageButton({ onClick }: { onClick: () => void }) {
  return <Button size="small" icon="edit" text="Edit Image" onClick={onClick} />;
}
