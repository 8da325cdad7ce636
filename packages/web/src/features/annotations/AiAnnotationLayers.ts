import type OlMap from 'ol/Map';
import ImageLayer from 'ol/layer/Image';
import ImageStatic from 'ol/source/ImageStatic';
import { AnnotationLayers } from './AnnotationLayers';
import type { AnnotationStore } from './annotationStore';

export interface AiLayerOptions {
  /** The slide's level-0 size: a heatmap is stretched over it. */
  width: number;
  height: number;
  /** µm per pixel (lengths of AI lines). */
  mpp: number | null;
  classColor: (classId: number | null) => string | null;
  /** The heatmap PNGs of the image's imports (GET /api/mld/{id}/heatmap). */
  heatmaps: readonly string[];
}

/** The heatmaps' canvas, under the AI objects (zIndex 6–8) and the readers' annotations (10–12). */
const HEATMAP_Z = 5;

/**
 * The imported AI annotations on the map, engine side (issue 17; docs/MLD.md): the AI objects
 * through the same layers as the readers' annotations (points and HPFs in the instanced WebGL
 * layer, regions and lines in a canvas layer) but their own, with no drawing interaction, so no
 * tool ever hits or edits them; and each import's heatmap as an image stretched over the whole
 * slide (best effort: the file says nothing more precise). 'i' shows or hides them all; the AI
 * opacity slider sets their opacity.
 */
export class AiAnnotationLayers {
  readonly objects: AnnotationLayers;
  readonly heatmaps: ImageLayer<ImageStatic>[];

  constructor(
    private readonly map: OlMap,
    store: AnnotationStore,
    options: AiLayerOptions,
  ) {
    this.objects = new AnnotationLayers(map, store, {
      celiac: false,
      mpp: options.mpp,
      classColor: options.classColor,
      width: options.width,
      height: options.height,
      kind: 'ai',
    });
    const projection = map.getView().getProjection();
    // The map has y up: the slide covers [0, -height, width, 0] (viewerGeometry.ts).
    const extent = [0, -options.height, options.width, 0];
    this.heatmaps = options.heatmaps.map(
      (url) =>
        new ImageLayer({
          source: new ImageStatic({ url, imageExtent: extent, projection, interpolate: true }),
          className: 'lamina-ai-heatmap',
          zIndex: HEATMAP_Z,
        }),
    );
    for (const layer of this.heatmaps) map.addLayer(layer);
  }

  /** 'i' and the AI layers checkbox. */
  setVisible(visible: boolean): void {
    this.objects.setVisible(visible);
    for (const layer of this.heatmaps) layer.setVisible(visible);
  }

  /** The AI opacity slider, 0…1 (0 by default when nothing was set, doc 3 §9). */
  setOpacity(opacity: number): void {
    this.objects.setOpacity(opacity);
    for (const layer of this.heatmaps) layer.setOpacity(opacity);
  }

  destroy(): void {
    this.objects.destroy();
    for (const layer of this.heatmaps) {
      this.map.removeLayer(layer);
      layer.dispose();
    }
  }
}
