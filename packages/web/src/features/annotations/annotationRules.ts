import {
  ANNOTATION_MESSAGES,
  CLASS_TOOLS,
  CREATE_ANNOTATION_PERMISSION,
  DELETE_ANNOTATION_PERMISSION,
  TOOL_KEYS,
  TOOL_TYPES,
  TOOLS_NEEDING_EDIT,
  isAnnotationTool,
  type AnnotationClassView,
  type AnnotationTool,
  type AnnotationView,
  type ClassRef,
  type StudyView,
} from '@lamina/domain';
import { keyBelongsToFocus } from '../../lib/typingTarget';

/** What the user may do with annotations (doc 3 §6). */
export interface AnnotationPermissions {
  /** AP_ImageViewer_ViewAnnotationsToolbar. */
  toolbar: boolean;
  /** AP_ImageViewer_EditCreateAnnotations: drawing anything, the HPF/Point/Freehand tools and keys. */
  create: boolean;
  /** The delete menus: AP_ImageViewer_DeleteAnnotations with the create permission. */
  delete: boolean;
  /** AP_ImageCaseViewer_ViewAnnotationstab. */
  tab: boolean;
}

export function annotationPermissions(actions: readonly string[]): AnnotationPermissions {
  const has = (p: string) => actions.includes(p);
  const create = has(CREATE_ANNOTATION_PERMISSION);
  return {
    toolbar: has('AP_ImageViewer_ViewAnnotationsToolbar'),
    create,
    delete: create && has(DELETE_ANNOTATION_PERMISSION),
    tab: has('AP_ImageCaseViewer_ViewAnnotationstab'),
  };
}

/** The study's four class lists as the tools use them. */
export interface StudyClasses {
  hpf: ClassRef[];
  point: ClassRef[];
  freehand: ClassRef[];
  multiline: ClassRef[];
}

const byOrder = (a: ClassRef, b: ClassRef) => a.sortOrder - b.sortOrder || a.id - b.id;
const refs = (list: readonly AnnotationClassView[]): ClassRef[] =>
  list
    .filter((c) => !c.deleted)
    .map(({ id, name, color, sortOrder, enabled }) => ({ id, name, color, sortOrder, enabled }))
    .sort(byOrder);

export function studyClasses(study: StudyView | undefined): StudyClasses {
  return {
    hpf: refs(study?.hpfClasses ?? []),
    point: refs(study?.pointClasses ?? []),
    freehand: refs(study?.freehandClasses ?? []),
    multiline: refs(study?.multilineClasses ?? []),
  };
}

/** The classes a tool's flyout lists: the enabled ones, in the study's order (doc 3 §2). */
export function classesOfTool(tool: AnnotationTool, classes: StudyClasses): ClassRef[] {
  const list =
    tool === 'hpf' ? classes.hpf : tool === 'point' ? classes.point : tool === 'freehand' ? classes.freehand : [];
  return list.filter((c) => c.enabled);
}

/** Loaded annotations per class of one type (the flyouts' counts). */
export function classCounts(annotations: readonly AnnotationView[], tool: AnnotationTool): Map<number | null, number> {
  const type = TOOL_TYPES[tool];
  const counts = new Map<number | null, number>();
  for (const a of annotations) {
    if (a.annotationType !== type) continue;
    counts.set(a.annotationClassId, (counts.get(a.annotationClassId) ?? 0) + 1);
  }
  return counts;
}

export interface ToolContext {
  permissions: AnnotationPermissions;
  /** Celiac study with at least one enabled multiline class (doc 3 §2). */
  multilineAvailable: boolean;
  /** The user's annotations here are locked (their read is scored). */
  locked: boolean;
}

/**
 * Whether a tool can be chosen, and if not why (the button's tooltip). Drawing needs the create
 * permission (the HPF, Point and Freehand buttons still open their flyouts to show the classes).
 */
export function toolDisabledReason(tool: AnnotationTool, context: ToolContext): string | null {
  if (tool === 'multiline' && !context.multilineAvailable)
    return 'Line measurements need a celiac study with enabled line classes';
  if (!context.permissions.create) return 'You may not create annotations';
  if (context.locked) return ANNOTATION_MESSAGES.lockedScored;
  return null;
}

export function isClassTool(tool: AnnotationTool): boolean {
  return CLASS_TOOLS.includes(tool);
}

/** What a key does to the tools: choose one, close (Escape), or nothing. */
export type ToolKeyAction = { kind: 'tool'; tool: AnnotationTool } | { kind: 'escape' } | null;

const KEY_TOOL = new Map(Object.entries(TOOL_KEYS).map(([tool, key]) => [key, tool]));

/**
 * The tool keys r l t o h p f and Escape (doc 3 §2): nothing while annotations are hidden; h, p, f
 * need the create permission; a tool that cannot be chosen (toolDisabledReason) is not chosen.
 */
export function toolKeyAction(
  key: string,
  context: ToolContext & { annotationsVisible: boolean; toolbarShown: boolean },
): ToolKeyAction {
  if (key === 'Escape') return { kind: 'escape' };
  const tool = KEY_TOOL.get(key);
  if (!tool || !isAnnotationTool(tool)) return null;
  if (!context.annotationsVisible || !context.toolbarShown) return null;
  if (TOOLS_NEEDING_EDIT.includes(tool) && !context.permissions.create) return null;
  if (toolDisabledReason(tool, context) !== null) return null;
  return { kind: 'tool', tool };
}

const ANNOTATION_KEYS = new Set<string>([...Object.values(TOOL_KEYS), 'Escape']);

/**
 * The annotation tool key of a key press (doc 3 §2: r l t o h p f, and Escape to cancel or close
 * the tool), or null (typing in a field, a modifier held, another key). Which tool it chooses, and
 * whether it may (annotations shown, the edit permission for h p f), is the tools' rule
 * (toolKeyAction).
 */
export function annotationKeyFor(
  event: Pick<KeyboardEvent, 'key' | 'target' | 'ctrlKey' | 'metaKey' | 'altKey'>,
): string | null {
  if (event.ctrlKey || event.metaKey || event.altKey || keyBelongsToFocus(event)) return null;
  return ANNOTATION_KEYS.has(event.key) ? event.key : null;
}

/**
 * Undo or redo of a key press (issue 29 item 5): Ctrl+Z (⌘Z) undoes, Ctrl+Shift+Z (⇧⌘Z) and
 * Ctrl+Y redo — wherever the focus is not where the key belongs (typing: the field's own undo; an
 * open dialog), as every viewer shortcut; null otherwise.
 */
export function historyKeyFor(
  event: Pick<KeyboardEvent, 'key' | 'target' | 'ctrlKey' | 'metaKey' | 'altKey' | 'shiftKey'>,
): 'undo' | 'redo' | null {
  if (!(event.ctrlKey || event.metaKey) || event.altKey || keyBelongsToFocus(event)) return null;
  const key = event.key.toLowerCase();
  if (key === 'z') return event.shiftKey ? 'redo' : 'undo';
  if (key === 'y' && !event.shiftKey) return 'redo';
  return null;
}

/** A tool name from outside the known set (a stale link, a bad state): 'Unexpected: {tool}'. */
export function toolError(tool: string): string | null {
  return isAnnotationTool(tool) ? null : ANNOTATION_MESSAGES.unexpectedTool(tool);
}
