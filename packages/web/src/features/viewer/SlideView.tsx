import type { ImageView } from '@lamina/domain';
import { useCallback, useEffect, useRef, useState, useSyncExternalStore } from 'react';
import { ViewerControls } from './ViewerControls';
import { carriedView, ViewerEngine, type CarriedView } from './ViewerEngine';
import { commandForKey, isHelpKey, layerToggleForKey, SHORTCUT_HELP } from './viewerShortcuts';
import { Button, Checkbox, Dialog, DialogBody, HTMLTable } from '@blueprintjs/core';
import {
  brightnessFilter,
  readAiOpacity,
  readAnnotationOpacity,
  readBrightness,
  readImageView,
  readLayerVisibility,
  readMicroscope,
  readMiniMapExpanded,
  writeAiOpacity,
  writeAnnotationOpacity,
  writeBrightness,
  writeImageView,
  writeLayerVisibility,
  writeMicroscope,
  writeMiniMapExpanded,
} from './viewerPreferences';
import { useDebouncedValue } from '../../components/useDebouncedValue';
import type { CSSProperties } from 'react';
import { useAnnotationSession } from '../annotations/AnnotationSession';
import { AddAnnotationPanel, AnnotationMessages, AnnotationToolbar } from '../annotations/AnnotationToolbar';
import { useAiAnnotationLayers } from '../annotations/useAiAnnotationLayers';
import { useAnnotationTools } from '../annotations/useAnnotationTools';

/** Brightness and opacity are applied (and kept) once the slider rests this long (doc 3 §9). */
const SLIDER_DEBOUNCE_MS = 100;
/** The view is kept (local storage) once it rests this long: not on every frame of a pan. */
const VIEW_SAVE_MS = 400;

export type ViewableImage = ImageView & { width: number; height: number; tileUrl: string };

/** True when the image can be drawn: processed, with a size (extent) and a tile URL (doc 3 §2). */
export function isViewable(image: ImageView): image is ViewableImage {
  return image.width !== null && image.height !== null && image.extent !== null && image.tileUrl !== null;
}

interface SlideViewProps {
  image: ViewableImage;
  /** Called (throttled by the engine) when tiles fail to load. */
  onTileError?: () => void;
  /** Tests inject an engine; the page makes its own. */
  engine?: ViewerEngine;
  /**
   * Open at this view (the case viewer switching images); without it, at the view the image was
   * last left at on this browser, else fitted.
   */
  initialView?: CarriedView | undefined;
  /** Told of every view change (the case viewer keeps the last one). */
  onView?: ((view: CarriedView) => void) | undefined;
  /** Told once the slide's first frame is drawn (the engine's `firstFrame`; the page then loads its sidebar, issue 28). */
  onFirstFrame?: ((imageId: number) => void) | undefined;
}

/**
 * The slide map and its controls. The engine is made once per image (mount with `key={image.id}`)
 * and attached to the DOM in an effect; controls render its snapshot and send it commands.
 */
export function SlideView({ image, onTileError, engine: given, initialView, onView, onFirstFrame }: SlideViewProps) {
  const [engine] = useState(
    () =>
      given ??
      new ViewerEngine(
        {
          id: image.id,
          width: image.width,
          height: image.height,
          maxTmsZoom: image.maxTmsZoom,
          tileUrl: image.tileUrl,
          zStackSize: image.zStackSize,
          objectivePower: image.objectivePower,
          physicalResolution: image.physicalResolution,
          magnifications: image.magnifications,
        },
        { miniMapExpanded: readMiniMapExpanded(), initialView: initialView ?? readImageView(image.id) },
      ),
  );
  const snapshot = useSyncExternalStore(engine.subscribe, () => engine.snapshot);
  const [helpOpen, setHelpOpen] = useState(false);
  const [brightness, setBrightness] = useState(readBrightness);
  const [microscope, setMicroscope] = useState(readMicroscope);
  const appliedBrightness = useDebouncedValue(brightness, SLIDER_DEBOUNCE_MS);
  useEffect(() => writeBrightness(appliedBrightness), [appliedBrightness]);
  useEffect(() => writeMicroscope(microscope), [microscope]);
  // Annotation layers (their drawing comes with the annotations work): shown by default; 'a' and
  // 'i' toggle them. The AI opacity starts at 0 unless the user set it (doc 3 §9).
  const [annotationsVisible, setAnnotationsVisible] = useState(() => readLayerVisibility().annotations);
  const [aiVisible, setAiVisible] = useState(() => readLayerVisibility().ai);
  useEffect(
    () => writeLayerVisibility({ annotations: annotationsVisible, ai: aiVisible }),
    [annotationsVisible, aiVisible],
  );
  const hasAi = image.mldFile !== null;
  const [aiOpacity, setAiOpacity] = useState(readAiOpacity);
  const appliedAiOpacity = useDebouncedValue(aiOpacity, SLIDER_DEBOUNCE_MS);
  useEffect(() => {
    if (hasAi) writeAiOpacity(appliedAiOpacity);
  }, [hasAi, appliedAiOpacity]);
  // The annotations of this image (AnnotationProvider of the page), drawn by engine-side layers.
  const annotationSession = useAnnotationSession();
  const session = annotationSession && annotationSession.imageId === image.id ? annotationSession : null;
  const toolbarShown = !!session?.permissions.toolbar;
  // The annotation opacity slider (issue 29 item 16): the layers follow it at once, the preference
  // is kept once it rests (doc 3 §9); layers made later (another class list) start at its value.
  const [annotationOpacity, setAnnotationOpacity] = useState(readAnnotationOpacity);
  const annotationOpacityRef = useRef(annotationOpacity);
  const currentAnnotationOpacity = useCallback(() => annotationOpacityRef.current, []);
  const keptAnnotationOpacity = useDebouncedValue(annotationOpacity, SLIDER_DEBOUNCE_MS);
  useEffect(() => writeAnnotationOpacity(keptAnnotationOpacity), [keptAnnotationOpacity]);
  const tools = useAnnotationTools(engine, session, annotationsVisible, toolbarShown, currentAnnotationOpacity);
  const setToolsOpacity = tools?.setOpacity;
  useEffect(() => {
    annotationOpacityRef.current = annotationOpacity;
    setToolsOpacity?.(annotationOpacity / 100);
  }, [setToolsOpacity, annotationOpacity]);
  // The imported AI annotations and heatmap (issue 17): 'i' and the AI opacity slider.
  useAiAnnotationLayers(engine, session?.ai ?? null, aiVisible, appliedAiOpacity / 100, image.physicalResolution);
  const mapRef = useRef<HTMLDivElement>(null);
  const miniMapRef = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (!mapRef.current) return;
    engine.mount(mapRef.current, miniMapRef.current ?? undefined);
    return () => engine.unmount();
  }, [engine]);

  useEffect(() => {
    if (!onFirstFrame) return undefined;
    if (!engine.firstFrameShown) return engine.on('firstFrame', () => onFirstFrame(image.id));
    onFirstFrame(image.id);
    return undefined;
  }, [engine, onFirstFrame, image.id]);

  useEffect(() => engine.on('miniMap', ({ expanded }) => writeMiniMapExpanded(expanded)), [engine]);

  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const off = engine.on('view', (view) => {
      const carried = carriedView(view, image);
      onView?.(carried);
      clearTimeout(timer);
      timer = setTimeout(() => writeImageView(image.id, carried), VIEW_SAVE_MS);
    });
    return () => {
      off();
      clearTimeout(timer);
    };
  }, [engine, onView, image]);

  useEffect(() => {
    if (!onTileError) return;
    return engine.on('tileError', () => onTileError());
  }, [engine, onTileError]);

  // A fresh token arrives with a refetched image (after tile errors).
  useEffect(() => engine.setTileUrl(image.tileUrl), [engine, image.tileUrl]);

  useEffect(() => {
    const handleKeyDown = (event: KeyboardEvent) => {
      // A control took the key already (a slider's arrows, a menu's Enter).
      if (event.defaultPrevented) return;
      if (isHelpKey(event)) {
        event.preventDefault();
        setHelpOpen(true);
        return;
      }
      const layer = layerToggleForKey(event);
      if (layer) {
        event.preventDefault();
        if (layer === 'annotations') setAnnotationsVisible((visible) => !visible);
        else setAiVisible((visible) => !visible);
        return;
      }
      const command = commandForKey(event);
      if (!command) return;
      event.preventDefault();
      engine.execute(command);
    };
    window.addEventListener('keydown', handleKeyDown);
    return () => window.removeEventListener('keydown', handleKeyDown);
  }, [engine]);

  return (
    <div className="lamina-slide">
      <div
        ref={mapRef}
        className="lamina-slide-map"
        data-testid="slide-map"
        role="application"
        aria-label={`Slide ${image.name}`}
        tabIndex={0}
        // The tile layers' filter (viewer.css): brightness on tiles only, not on annotations.
        style={{ '--lamina-tile-filter': brightnessFilter(appliedBrightness) } as CSSProperties}
      />
      {microscope && <div className="lamina-microscope" data-testid="microscope-mode" aria-hidden="true" />}
      <ViewerControls
        snapshot={snapshot}
        stackSize={image.zStackSize}
        onCommand={(command) => engine.execute(command)}
        miniMapRef={miniMapRef}
        brightness={brightness}
        onBrightness={setBrightness}
        microscope={microscope}
        onMicroscope={setMicroscope}
        annotationOpacity={tools && annotationsVisible ? annotationOpacity : null}
        onAnnotationOpacity={setAnnotationOpacity}
        aiOpacity={hasAi && aiVisible ? aiOpacity : null}
        onAiOpacity={setAiOpacity}
      />
      {tools && <AddAnnotationPanel tools={tools} />}
      {/* Bottom right (doc 3 §2): the annotations checkbox and the annotation toolbar. */}
      <div className="lamina-viewer-annotations" hidden={!snapshot.overlaysVisible} data-testid="annotation-controls">
        {tools && <AnnotationMessages tools={tools} />}
        {tools && toolbarShown && annotationsVisible && tools.session.study && tools.data.loaded && (
          <AnnotationToolbar tools={tools} />
        )}
        <Checkbox
          className="lamina-viewer-panel"
          label="Annotations"
          checked={annotationsVisible}
          onChange={() => setAnnotationsVisible((visible) => !visible)}
        />
        {hasAi && (
          <Checkbox
            className="lamina-viewer-panel"
            label="AI layers"
            title="Show or hide the imported AI annotations and heatmap (i)"
            checked={aiVisible}
            onChange={() => setAiVisible((visible) => !visible)}
          />
        )}
      </div>
      <Button
        className="lamina-shortcuts-button"
        icon="key-command"
        variant="minimal"
        aria-label="Keyboard shortcuts"
        title="Keyboard shortcuts (?)"
        onClick={() => setHelpOpen(true)}
      />
      <Dialog isOpen={helpOpen} onClose={() => setHelpOpen(false)} title="Keyboard shortcuts">
        <DialogBody>
          <HTMLTable compact aria-label="Keyboard shortcuts">
            <tbody>
              {SHORTCUT_HELP.map((shortcut) => (
                <tr key={shortcut.keys}>
                  <th scope="row">
                    <kbd>{shortcut.keys}</kbd>
                  </th>
                  <td>{shortcut.action}</td>
                </tr>
              ))}
            </tbody>
          </HTMLTable>
          <p className="bp6-text-muted">Shortcuts are ignored while you type in a field.</p>
        </DialogBody>
      </Dialog>
    </div>
  );
}
