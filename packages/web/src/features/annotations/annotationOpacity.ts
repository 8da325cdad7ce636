import type OlMap from 'ol/Map';

/**
 * The class names of the readers' annotation layers on the map (AnnotationLayers: the WebGL points
 * and HPFs, and the vector shapes). The shape being drawn ('lamina-annotation-draft') and the AI
 * layers ('lamina-ai-…', their own slider) are not among them.
 */
const READER_LAYERS: ReadonlySet<string> = new Set(['lamina-annotation-layer', 'lamina-annotation-layer-gl']);

/**
 * Sets the readers' annotation layers' opacity (0…1) live, as the annotation opacity slider moves
 * (issue 29 item 16); the layers made later read the stored preference themselves. The same layers
 * AnnotationLayers.setOpacity sets, found on the map because the tools keep that object to themselves.
 */
export function setAnnotationLayersOpacity(map: OlMap, opacity: number): void {
  for (const layer of map.getLayers().getArray())
    if (READER_LAYERS.has(layer.getClassName())) layer.setOpacity(opacity);
}
