import { Button, Callout } from '@blueprintjs/core';
import type { ImageView } from '@lamina/domain';
import { useState, type PointerEvent } from 'react';

/** Width of the label and macro images in the panel (doc 3 §9). */
export const LABEL_IMAGE_WIDTH = 300;
/** How much the hover lens enlarges. */
export const HOVER_ZOOM = 3;
const LENS_PX = 140;

interface Lens {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * One associated image at 300 px wide; hovering shows a lens that enlarges the spot under the
 * pointer (a label's handwriting, a macro's tissue outline). A failed load is a red callout.
 */
function ZoomableImage({ src, title }: { src: string; title: string }) {
  const [failed, setFailed] = useState(false);
  const [lens, setLens] = useState<Lens | null>(null);
  if (failed)
    return (
      <Callout intent="danger" compact title={`The ${title.toLowerCase()} image could not be loaded`}>
        Try again later; if it persists, the slide may have no {title.toLowerCase()} image.
      </Callout>
    );
  const move = (event: PointerEvent<HTMLImageElement>) => {
    const box = event.currentTarget.getBoundingClientRect();
    setLens({ x: event.clientX - box.left, y: event.clientY - box.top, width: box.width, height: box.height });
  };
  return (
    <figure className="lamina-label-figure">
      <figcaption>{title}</figcaption>
      <div className="lamina-label-frame">
        <img
          src={src}
          alt={`${title} image of the slide`}
          width={LABEL_IMAGE_WIDTH}
          onError={() => setFailed(true)}
          onPointerMove={move}
          onPointerLeave={() => setLens(null)}
        />
        {lens && (
          <div
            className="lamina-label-lens"
            data-testid={`${title.toLowerCase()}-lens`}
            aria-hidden="true"
            style={{
              width: LENS_PX,
              height: LENS_PX,
              left: lens.x - LENS_PX / 2,
              top: lens.y - LENS_PX / 2,
              backgroundImage: `url("${src}")`,
              backgroundSize: `${lens.width * HOVER_ZOOM}px ${lens.height * HOVER_ZOOM}px`,
              backgroundPosition: `${LENS_PX / 2 - lens.x * HOVER_ZOOM}px ${LENS_PX / 2 - lens.y * HOVER_ZOOM}px`,
            }}
          />
        )}
      </div>
    </figure>
  );
}

/** The Macro/Label panel (doc 3 §2): the slide's label and macro images, where the user may see them. */
export function MacroLabelPanel({ image, onClose }: { image: ImageView; onClose: () => void }) {
  return (
    <section className="lamina-label-panel" aria-label="Label and macro images">
      <div className="lamina-label-panel-head">
        <strong>Label and macro</strong>
        <Button size="small" variant="minimal" icon="cross" aria-label="Close the label panel" onClick={onClose} />
      </div>
      {image.hasLabel && <ZoomableImage src={`/api/images/${image.id}/label`} title="Label" />}
      {image.hasMacro && <ZoomableImage src={`/api/images/${image.id}/macro`} title="Macro" />}
    </section>
  );
}
