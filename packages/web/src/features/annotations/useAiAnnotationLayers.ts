import { useEffect, useMemo, useRef } from 'react';
import { AiAnnotationLayers } from './AiAnnotationLayers';
import type { AnnotationHost } from './annotationHost';
import type { AiSession } from './aiSession';

/**
 * Attaches the image's imported AI annotations (and heatmaps) to the engine once the AI layers
 * have loaded, and keeps their visibility ('i') and opacity (the AI opacity slider, 0…1) in step.
 */
export function useAiAnnotationLayers(
  engine: AnnotationHost,
  ai: AiSession | null,
  visible: boolean,
  opacity: number,
  mpp: number | null,
): void {
  const store = ai?.store ?? null;
  const classColor = ai?.classColor;
  const heatmapKey = (ai?.layers?.imports ?? []).flatMap((i) => (i.heatmap ? [i.heatmap.url] : [])).join('\n');
  const heatmaps = useMemo(() => (heatmapKey === '' ? [] : heatmapKey.split('\n')), [heatmapKey]);
  const ready = !!ai?.layers;
  const layersRef = useRef<AiAnnotationLayers | null>(null);
  const latest = useRef({ visible, opacity });
  useEffect(() => {
    latest.current = { visible, opacity };
  });

  useEffect(() => {
    if (!store || !classColor || !ready) return;
    const layers = new AiAnnotationLayers(engine.olMap, store, {
      width: engine.image.width,
      height: engine.image.height,
      mpp,
      classColor,
      heatmaps,
    });
    layers.setVisible(latest.current.visible);
    layers.setOpacity(latest.current.opacity);
    layersRef.current = layers;
    return () => {
      layers.destroy();
      layersRef.current = null;
    };
  }, [engine, store, classColor, ready, heatmaps, mpp]);

  useEffect(() => layersRef.current?.setVisible(visible), [visible, store, ready]);
  useEffect(() => layersRef.current?.setOpacity(opacity), [opacity, store, ready]);
}
