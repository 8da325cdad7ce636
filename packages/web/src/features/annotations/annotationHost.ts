import type OlMap from 'ol/Map';

/**
 * What the annotation layers and tools need of the viewer's engine (features/viewer's ViewerEngine
 * has it): its OpenLayers map, the slide's size in pixels and the current resolution. Declared here,
 * so annotations never import the viewer that composes them (docs/ARCHITECTURE.md, web layers).
 */
export interface AnnotationHost {
  readonly olMap: OlMap;
  readonly image: { readonly width: number; readonly height: number };
  getState(): { readonly resolution: number };
}
