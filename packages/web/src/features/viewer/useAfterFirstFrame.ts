import type { ImageView } from '@lamina/domain';
import { useCallback, useState } from 'react';
import { isFailed, isProcessing } from '../../api/imageQuery';
import { isViewable } from './SlideView';

interface Shown {
  /** The image the viewer shows (null: none, or not known yet). */
  imageId: number | null;
  /** Its query: loaded, failed, or still on its way. */
  image: { data?: ImageView | undefined; isError: boolean };
  /** Whether the page knows what it shows (the case viewer: once its case is loaded). Default true. */
  known?: boolean;
}

/**
 * The viewers' sidebars (queries, annotations, AI layers, the study, the image's case) wait for the
 * slide's first complete frame (the engine's `firstFrame`: drawn, or a second after the first tile
 * requests), so that nothing they render or ask for runs between the tiles' requests and their
 * drawing (issue 28).
 * When no tiles will come (no image, an error, processing, a failed slide) they load at once.
 * Once ready it stays so: the case viewer switching images keeps its sidebar. `onFirstFrame` goes
 * to the slide (ImageViewerBody → SlideView).
 */
export function useAfterFirstFrame({ imageId, image, known = true }: Shown) {
  const [drawnOf, setDrawnOf] = useState<number | null>(null);
  const [opened, setOpened] = useState(false);
  const onFirstFrame = useCallback((id: number) => setDrawnOf(id), []);
  const data = image.data?.id === imageId ? image.data : undefined;
  const noTiles =
    imageId === null ||
    image.isError ||
    (data !== undefined && (isFailed(data) || isProcessing(data) || !isViewable(data)));
  const ready = opened || (known && (noTiles || drawnOf === imageId));
  // Derived state kept for the next renders (React allows setting a component's own state here).
  if (ready && !opened) setOpened(true);
  return { ready, onFirstFrame };
}
