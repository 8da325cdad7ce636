import {
  readerKeys,
  toAnnotationViewInPlace,
  type AnnotationAuthor,
  type AnnotationListResponse,
  type AnnotationView,
  type ReaderKey,
} from '@lamina/domain';
import { TypedEmitter } from '../../lib/typedEmitter';

/**
 * A node of the Annotations tab whose visibility the user toggles (doc 3 §3 "HPF tree node": the
 * visibility entries hpfClassId, hpfId, pointClassId). null ids are the reserved 'Other' class and
 * 'Orphan' HPF.
 */
export type NodeRef =
  | { kind: 'hpfClass'; classId: number | null }
  | { kind: 'hpf'; hpfId: number | null }
  | { kind: 'points'; hpfId: number | null; classId: number | null }
  | { kind: 'annotation'; id: number }
  /** Every annotation of a class, whatever its type (the imported AI classes: HPFs, points, regions). */
  | { kind: 'class'; classId: number };

/** What the map emphasises while the pointer is over a node of the tab. */
export type Highlight = NodeRef;

export function nodeKey(node: NodeRef): string {
  switch (node.kind) {
    case 'hpfClass':
      return `c:${node.classId ?? 'other'}`;
    case 'hpf':
      return `h:${node.hpfId ?? 'orphan'}`;
    case 'points':
      return `p:${node.hpfId ?? 'orphan'}:${node.classId ?? 'other'}`;
    case 'annotation':
      return `a:${node.id}`;
    case 'class':
      return `k:${node.classId}`;
  }
}

/** What changed in the data, so the map layers touch only those features. */
export type DataChange =
  { kind: 'reset' } | { kind: 'patch'; added: AnnotationView[]; removed: number[]; reparented: AnnotationView[] };

export interface AnnotationSnapshot {
  /** Every loaded annotation of the image, in id order (drawing order). */
  annotations: readonly AnnotationView[];
  /** The annotations the per-reader filter lets through (the tree and list count these). */
  shown: readonly AnnotationView[];
  locked: boolean;
  authors: readonly AnnotationAuthor[];
  loaded: boolean;
  /** Keys (nodeKey) of the hidden nodes. */
  hidden: ReadonlySet<string>;
  highlight: Highlight | null;
  /** The reader whose annotations are shown; null: everyone's. */
  author: number | null;
  /**
   * Every reader shown and more than one in the list (the all-readers view, issue 29 item 12): each
   * reader's colour (readerKeys), which the map draws their annotations in and the legend shows.
   * null otherwise (one reader chosen, or a reader's own list): the class colours.
   */
  readers: readonly ReaderKey[] | null;
}

interface StoreEvents {
  /** Any change (for useSyncExternalStore). */
  change: AnnotationSnapshot;
  data: DataChange;
  /** Hidden nodes or the reader filter changed: which annotations are drawn. */
  visibility: null;
  highlight: Highlight | null;
}

type Reparent = { id: number; parentId: number | null };

/**
 * The annotations of one image as the viewer holds them: loaded once (the list may hold 200,000
 * rows), patched by creates and deletes, with the tab's per-node visibility, hover highlight and
 * per-reader filter. The map layers (engine side) and the Annotations tab (React) both read it.
 */
export class AnnotationStore extends TypedEmitter<StoreEvents> {
  private readonly byId = new Map<number, AnnotationView>();
  private list: AnnotationView[] = [];
  private listDirty = false;
  private shownList: AnnotationView[] = [];
  private shownDirty = false;
  private locked = false;
  private loaded = false;
  private authors: AnnotationAuthor[] = [];
  private hidden = new Set<string>();
  private highlight: Highlight | null = null;
  private author: number | null = null;
  private readers: ReaderKey[] | null = null;
  private readerColour = new Map<number, string>();
  private current: AnnotationSnapshot;

  constructor(readonly imageId: number) {
    super();
    this.current = this.makeSnapshot();
  }

  /** The list response: each compact row becomes a view in place (no copy of 200,000 rows). */
  load(response: AnnotationListResponse): void {
    this.byId.clear();
    const list = new Array<AnnotationView>(response.annotations.length);
    let sorted = true;
    let prior = -Infinity;
    response.annotations.forEach((row, i) => {
      const view = toAnnotationViewInPlace(row);
      list[i] = view;
      this.byId.set(view.id, view);
      if (view.id < prior) sorted = false;
      prior = view.id;
    });
    if (!sorted) list.sort((a, b) => a.id - b.id);
    this.list = list;
    this.listDirty = false;
    this.shownDirty = true;
    this.locked = response.locked;
    this.authors = response.authors;
    this.loaded = true;
    if (this.author !== null && !this.authors.some((a) => a.id === this.author)) this.author = null;
    this.updateReaders();
    this.changed({ kind: 'reset' });
  }

  /** A created annotation and the points the server moved into it. */
  add(annotation: AnnotationView, reparented: readonly Reparent[] = []): void {
    this.addAll([annotation], reparented);
  }

  /** Annotations back (a restore: an HPF with its points) and the points the server moved. */
  addAll(annotations: readonly AnnotationView[], reparented: readonly Reparent[] = []): void {
    for (const a of annotations) this.byId.set(a.id, a);
    this.listDirty = true;
    const moved = this.reparent(reparented);
    this.changed({ kind: 'patch', added: [...annotations], removed: [], reparented: moved });
  }

  /** Deleted annotations and the points whose HPF changed. */
  remove(deletedIds: readonly number[], reparented: readonly Reparent[] = []): void {
    const removed = deletedIds.filter((id) => this.byId.delete(id));
    this.listDirty = true;
    const moved = this.reparent(reparented);
    this.changed({ kind: 'patch', added: [], removed, reparented: moved });
  }

  private reparent(reparented: readonly Reparent[]): AnnotationView[] {
    const moved: AnnotationView[] = [];
    for (const { id, parentId } of reparented) {
      const prior = this.byId.get(id);
      if (!prior) continue;
      const next = { ...prior, parentId };
      this.byId.set(id, next);
      moved.push(next);
      this.listDirty = true;
    }
    return moved;
  }

  get(id: number): AnnotationView | undefined {
    return this.byId.get(id);
  }

  setHidden(node: NodeRef, hidden: boolean): void {
    const key = nodeKey(node);
    if (this.hidden.has(key) === hidden) return;
    const next = new Set(this.hidden);
    if (hidden) next.add(key);
    else next.delete(key);
    this.hidden = next;
    this.changed(undefined, true);
  }

  isHidden(node: NodeRef): boolean {
    return this.hidden.has(nodeKey(node));
  }

  setHighlight(highlight: Highlight | null): void {
    if (highlight === this.highlight) return;
    if (highlight && this.highlight && nodeKey(highlight) === nodeKey(this.highlight)) return;
    this.highlight = highlight;
    this.changed(undefined, false, true);
  }

  /** Shows one reader's annotations (null: everyone's). */
  setAuthor(author: number | null): void {
    if (author === this.author) return;
    this.author = author;
    this.shownDirty = true;
    this.updateReaders();
    this.changed(undefined, true);
  }

  private updateReaders(): void {
    this.readers = this.author === null && this.authors.length > 1 ? readerKeys(this.authors) : null;
    this.readerColour = new Map((this.readers ?? []).map((r) => [r.id, r.color]));
  }

  /**
   * The colour the map draws an annotation in: its reader's in the all-readers view (snapshot
   * `readers`), else `classColour` (its class's, the caller's rule). An author the list did not name
   * (drawn since it loaded) keeps the class colour.
   */
  colourOf(a: AnnotationView, classColour: (a: AnnotationView) => string | null): string | null {
    const colour = a.userId === null ? undefined : this.readerColour.get(a.userId);
    return colour ?? classColour(a);
  }

  /**
   * Whether the map draws an annotation: the reader filter lets it through and no node holding it
   * is hidden (its HPF class, its HPF or the Orphan, its point class within that HPF, or itself).
   */
  isDrawn(a: AnnotationView): boolean {
    if (this.author !== null && a.userId !== this.author) return false;
    const hidden = this.hidden;
    if (hidden.size === 0) return true;
    if (hidden.has(`a:${a.id}`)) return false;
    if (a.annotationClassId !== null && hidden.has(`k:${a.annotationClassId}`)) return false;
    if (a.annotationType === 'HPF') {
      return !hidden.has(`h:${a.id}`) && !hidden.has(`c:${this.hpfClassKey(a)}`);
    }
    if (a.annotationType === 'POINT') {
      const parent = a.parentId !== null ? this.byId.get(a.parentId) : undefined;
      const hpf = parent && parent.annotationType === 'HPF' ? parent : undefined;
      const hpfKey = hpf ? String(hpf.id) : 'orphan';
      // A class that is not one of the study's shows as 'Other' in the tree (buildHpfTree).
      const pointClass =
        a.annotationClassId !== null && this.pointClassIds.has(a.annotationClassId) ? a.annotationClassId : 'other';
      if (hidden.has(`h:${hpfKey}`) || hidden.has(`p:${hpfKey}:${pointClass}`)) return false;
      if (hpf && hidden.has(`c:${this.hpfClassKey(hpf)}`)) return false;
    }
    return true;
  }

  private hpfClassKey(hpf: AnnotationView): string {
    return hpf.annotationClassId !== null && this.hpfClassIds.has(hpf.annotationClassId)
      ? String(hpf.annotationClassId)
      : 'other';
  }

  /** The study's HPF and point classes: an annotation of any other class is 'Other' in the tree. */
  private hpfClassIds = new Set<number>();
  private pointClassIds = new Set<number>();
  setClasses(hpfClassIds: readonly number[], pointClassIds: readonly number[]): void {
    this.hpfClassIds = new Set(hpfClassIds);
    this.pointClassIds = new Set(pointClassIds);
  }

  private annotationsInOrder(): AnnotationView[] {
    if (this.listDirty) {
      this.list = [...this.byId.values()].sort((a, b) => a.id - b.id);
      this.listDirty = false;
      this.shownDirty = true;
    }
    return this.list;
  }

  private makeSnapshot(): AnnotationSnapshot {
    const annotations = this.annotationsInOrder();
    if (this.shownDirty) {
      const author = this.author;
      this.shownList = author === null ? annotations : annotations.filter((a) => a.userId === author);
      this.shownDirty = false;
    }
    return {
      annotations,
      shown: this.shownList,
      locked: this.locked,
      authors: this.authors,
      loaded: this.loaded,
      hidden: this.hidden,
      highlight: this.highlight,
      author: this.author,
      readers: this.readers,
    };
  }

  /** A new snapshot first, so every listener reads the state the event announces. */
  private changed(data?: DataChange, visibility = false, highlight = false): void {
    this.current = this.makeSnapshot();
    if (data) this.emit('data', data);
    if (visibility) this.emit('visibility', null);
    if (highlight) this.emit('highlight', this.highlight);
    this.emit('change', this.current);
  }

  get snapshot(): AnnotationSnapshot {
    return this.current;
  }

  subscribe = (listener: () => void): (() => void) => this.on('change', listener);
}
