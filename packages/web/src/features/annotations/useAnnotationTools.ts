import {
  ANNOTATION_MESSAGES,
  CLASS_TOOLS,
  isAnnotationTool,
  TOOL_TYPES,
  nextMultilineSelection,
  tiltToWire,
  type AnnotationTool,
  type CreateAnnotationRequest,
  type MultilineSelection,
} from '@lamina/domain';
import { useCallback, useEffect, useMemo, useRef, useState, useSyncExternalStore } from 'react';
import { errorMessage } from '../../api/ApiError';
import { keyBelongsToFocus } from '../../lib/typingTarget';
import { useCreateAnnotation } from './api';
import type { AnnotationHost } from './annotationHost';
import { AnnotationLayers } from './AnnotationLayers';
import {
  annotationKeyFor,
  classesOfTool,
  historyKeyFor,
  toolDisabledReason,
  toolKeyAction,
  type ToolContext,
} from './annotationRules';
import type { AnnotationSession } from './AnnotationSession';
import type { AnnotationSnapshot } from './annotationStore';
import { DrawingMachine, type CompletedShape, type DrawingSnapshot } from './drawingMachine';
import { useAnnotationHistory, type HistoryControls } from './useAnnotationHistory';

export type ClassTool = 'hpf' | 'point' | 'freehand';

/** The annotation tools' state for the toolbar, the 'Add annotation' panel and the messages. */
export interface AnnotationTools {
  session: AnnotationSession;
  machine: DrawingMachine;
  drawing: DrawingSnapshot;
  data: AnnotationSnapshot;
  context: ToolContext;
  /** The class each class tool draws with (null: none, the study has no class of that type). */
  selectedClass: Record<ClassTool, number | null>;
  /** The class and category the next multiline takes (null: every pair is drawn). */
  multiline: MultilineSelection | null;
  /** Chooses a tool (a name outside the known tools shows 'Unexpected: {tool}'). */
  choose: (tool: string, classId?: number | null) => void;
  /** Saves the placed shape of a panel tool with its text. */
  addPlaced: (text: string) => void;
  saving: boolean;
  /** The last failed save or refused choice. */
  error: string | null;
  clearError: () => void;
  /** The readers' annotation layers' opacity (0…1), live as the opacity slider moves (issue 29 item 16). */
  setOpacity: (opacity: number) => void;
  /** Undo and redo of the user's changes on this image (issue 29 item 5). */
  history: HistoryControls | null;
}

/**
 * Attaches the annotation layers and the drawing to the engine for one image, and runs the tools:
 * choosing (buttons and keys r l t o h p f, Escape), Space panning while drawing, undo and redo
 * (Ctrl+Z, Ctrl+Shift+Z or Ctrl+Y; not while a shape is being placed), saving a shape
 * with its class, multiline category or text, the tool staying active or resetting after a save.
 * `storedOpacity` reads the annotation opacity the user keeps (0…100, the viewer's preferences)
 * whenever the layers are made.
 */
export function useAnnotationTools(
  engine: AnnotationHost,
  session: AnnotationSession | null,
  annotationsVisible: boolean,
  toolbarShown: boolean,
  storedOpacity: () => number,
): AnnotationTools | null {
  const [machine] = useState(() => new DrawingMachine());
  const store = session?.store ?? null;
  const celiac = session?.celiac ?? false;
  const mpp = session?.mpp ?? null;
  const classes = session?.classes;
  const classColors = useMemo(() => {
    const colours = new Map<number, string>();
    if (classes) {
      const { hpf, point, freehand, multiline } = classes;
      for (const c of [...hpf, ...point, ...freehand, ...multiline]) colours.set(c.id, c.color);
    }
    return colours;
  }, [classes]);
  const layersRef = useRef<AnnotationLayers | null>(null);

  useEffect(() => {
    if (!store) return;
    const layers = new AnnotationLayers(
      engine.olMap,
      store,
      {
        celiac,
        mpp,
        classColor: (id) => (id === null ? null : (classColors.get(id) ?? null)),
        width: engine.image.width,
        height: engine.image.height,
      },
      machine,
    );
    layers.setOpacity(storedOpacity() / 100);
    layersRef.current = layers;
    return () => {
      layers.destroy();
      layersRef.current = null;
    };
  }, [engine, store, celiac, mpp, classColors, machine, storedOpacity]);

  useEffect(() => {
    if (layersRef.current) layersRef.current.hpfPreviewRadius = session?.hpfRadius ?? 0;
  });

  useEffect(() => {
    layersRef.current?.setVisible(annotationsVisible);
    // Hidden annotations: no tool (tool keys do nothing then, doc 3 §2).
    if (!annotationsVisible) machine.setTool(null);
  }, [annotationsVisible, machine, store, celiac, mpp, classColors]);

  const drawing = useSyncExternalStore(machine.subscribe, () => machine.snapshot);
  const emptyStore = useMemo(
    () => ({ subscribe: () => () => undefined, snapshot: null as AnnotationSnapshot | null }),
    [],
  );
  const data = useSyncExternalStore(store?.subscribe ?? emptyStore.subscribe, () =>
    store ? store.snapshot : emptyStore.snapshot,
  );

  const [selectedClass, setSelectedClass] = useState<Record<ClassTool, number | null>>({
    hpf: null,
    point: null,
    freehand: null,
  });
  const [error, setError] = useState<string | null>(null);
  const create = useCreateAnnotation(store);
  const history = useAnnotationHistory(session);

  const context: ToolContext = useMemo(
    () => ({
      permissions: session?.permissions ?? { toolbar: false, create: false, delete: false, tab: false },
      multilineAvailable: session?.multilineAvailable ?? false,
      locked: data?.locked ?? false,
    }),
    [session, data?.locked],
  );

  const userId = session?.userId ?? null;
  const multiline = useMemo(() => {
    if (!session || !data) return null;
    const own = data.annotations.filter((a) => a.annotationType === 'MULTILINE' && a.userId === userId);
    return nextMultilineSelection(session.classes.multiline, own);
  }, [session, data, userId]);

  const choose = useCallback(
    (name: string, classId?: number | null) => {
      if (!session) return;
      if (!isAnnotationTool(name)) {
        setError(ANNOTATION_MESSAGES.unexpectedTool(name));
        return;
      }
      const tool: AnnotationTool = name;
      const refused = toolDisabledReason(tool, context);
      if (refused) {
        setError(refused);
        return;
      }
      setError(null);
      if (CLASS_TOOLS.includes(tool)) {
        const classes = classesOfTool(tool, session.classes);
        const key = tool as ClassTool;
        const chosen =
          classId !== undefined
            ? classId
            : (classes.find((c) => c.id === selectedClass[key])?.id ?? classes[0]?.id ?? null);
        setSelectedClass((prior) => ({ ...prior, [key]: chosen }));
        machine.setTool(tool);
        return;
      }
      // The same button again closes its tool.
      machine.setTool(machine.activeTool === tool ? null : tool);
    },
    [session, context, selectedClass, machine],
  );

  // The latest values for the save callbacks (machine events outlive renders).
  const latest = useRef({ selectedClass, session });
  useEffect(() => {
    latest.current = { selectedClass, session };
  });

  // Line measurements sent and not answered yet: the next line takes the pair after theirs (a fast
  // reader draws the next line before the store has the last one).
  const linesInFlight = useRef<MultilineSelection[]>([]);

  const save = useCallback(
    (shape: CompletedShape, text: string | null) => {
      const { session: s, selectedClass: chosen } = latest.current;
      if (!s) return;
      const request: CreateAnnotationRequest = {
        imageId: s.imageId,
        annotationType: TOOL_TYPES[shape.tool],
        geometry: shape.geometry,
      };
      if (CLASS_TOOLS.includes(shape.tool)) {
        const classId = chosen[shape.tool as ClassTool];
        if (classId !== null) request.annotationClassId = classId;
      }
      let claimed: MultilineSelection | null = null;
      if (shape.tool === 'multiline') {
        const own = s.store.snapshot.annotations.filter(
          (a) => a.annotationType === 'MULTILINE' && a.userId === s.userId,
        );
        const taken = linesInFlight.current.map((l) => ({
          annotationClassId: l.classId,
          multilineCategory: l.category,
        }));
        const next = nextMultilineSelection(s.classes.multiline, [...own, ...taken]);
        if (!next) {
          setError(`${ANNOTATION_MESSAGES.unableToCreate}: every line class has its villus height and crypt depth`);
          return;
        }
        request.annotationClassId = next.classId;
        request.multilineCategory = next.category;
        claimed = next;
        linesInFlight.current.push(next);
      }
      if (text !== null && text.trim() !== '') request.text = text.trim();
      if (shape.tool === 'ellipse') {
        request.radiusX = shape.radiusX ?? 0;
        request.radiusY = shape.radiusY ?? 0;
        request.tilt = tiltToWire(shape.rotation ?? 0);
      }
      // Each call's own outcome (mutate's callbacks answer only the latest call of several in flight).
      create
        .mutateAsync(request)
        .then(
          (response) => {
            setError(null);
            machine.afterCreate(shape.tool);
            s.history.record({ kind: 'create', id: response.annotation.id, type: response.annotation.annotationType });
          },
          (e: unknown) => setError(errorMessage(e)),
        )
        .finally(() => {
          if (claimed) linesInFlight.current = linesInFlight.current.filter((l) => l !== claimed);
        });
    },
    [create, machine],
  );

  useEffect(() => machine.on('complete', (shape) => save(shape, null)), [machine, save]);

  const addPlaced = useCallback(
    (text: string) => {
      const shape = machine.placedShape();
      if (shape) save(shape, text);
    },
    [machine, save],
  );

  // Keys: r l t o h p f choose a tool, Escape cancels or closes, Enter ends a multiline, Space pans.
  const keyContext = useRef({ context, annotationsVisible, toolbarShown, choose, history });
  useEffect(() => {
    keyContext.current = { context, annotationsVisible, toolbarShown, choose, history };
  });
  useEffect(() => {
    if (!store) return;
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.defaultPrevented) return;
      if (event.key === ' ' && machine.activeTool && !keyBelongsToFocus(event)) {
        event.preventDefault();
        layersRef.current?.setPanning(true);
        return;
      }
      if (event.key === 'Enter' && machine.activeTool === 'multiline' && !keyBelongsToFocus(event)) {
        event.preventDefault();
        machine.finish(4 * engine.getState().resolution);
        return;
      }
      const undoOrRedo = historyKeyFor(event);
      if (undoOrRedo) {
        const h = keyContext.current.history;
        if (!h?.enabled) return;
        event.preventDefault();
        // A shape being placed is the drawing's own (Esc cancels it): the saved changes wait.
        if (machine.snapshot.state === 'PLACING') return;
        if (undoOrRedo === 'undo') h.undo();
        else h.redo();
        return;
      }
      const key = annotationKeyFor(event);
      if (key === null) return;
      const k = keyContext.current;
      const action = toolKeyAction(key, {
        ...k.context,
        annotationsVisible: k.annotationsVisible,
        toolbarShown: k.toolbarShown,
      });
      if (!action) return;
      if (action.kind === 'escape') {
        if (!machine.activeTool) return;
        event.preventDefault();
        machine.cancel();
        return;
      }
      event.preventDefault();
      k.choose(action.tool);
    };
    const onKeyUp = (event: KeyboardEvent) => {
      if (event.key === ' ') layersRef.current?.setPanning(false);
    };
    window.addEventListener('keydown', onKeyDown);
    window.addEventListener('keyup', onKeyUp);
    return () => {
      window.removeEventListener('keydown', onKeyDown);
      window.removeEventListener('keyup', onKeyUp);
    };
  }, [store, machine, engine]);

  // A crosshair while a tool is active; 'not-allowed' where a vertex would be refused (outside the slide).
  const outside = drawing.outside !== null;
  useEffect(() => {
    const viewport = engine.olMap.getViewport();
    if (viewport) viewport.style.cursor = drawing.tool ? (outside ? 'not-allowed' : 'crosshair') : '';
  }, [engine, drawing.tool, outside]);

  // Stable, so that a caller's effect on the opacity runs when the opacity changes, not every render.
  const setOpacity = useCallback((opacity: number) => layersRef.current?.setOpacity(opacity), []);

  // A locked read: no tool stays active.
  useEffect(() => {
    if (context.locked) machine.setTool(null);
  }, [context.locked, machine]);

  if (!session || !data) return null;
  return {
    session,
    machine,
    drawing,
    data,
    context,
    selectedClass,
    multiline,
    choose,
    addPlaced,
    saving: create.isPending,
    error,
    clearError: () => setError(null),
    setOpacity,
    history,
  };
}
