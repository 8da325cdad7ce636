import type { AnnotationType } from '@lamina/domain';
import { TypedEmitter } from '../../lib/typedEmitter';

/**
 * One change of the user's, as undo and redo replay it (issue 29 item 5). Annotations are only
 * created and deleted (there is no move or edit of a saved annotation), so each change is undone by
 * the other server call: a create by a delete (an HPF without its points: they go back to the HPF
 * that held them before), a delete by a restore (POST …/restore: the same ids, an HPF's points
 * deleted with it too). Ids never change, so later entries stay valid.
 */
export type HistoryEntry =
  | { kind: 'create'; id: number; type: AnnotationType }
  | { kind: 'delete'; id: number; type: AnnotationType; deleteNested: boolean };

/** The server calls undo and redo make; each rejects with the server's message and changes nothing. */
export interface HistoryOps {
  remove: (id: number, deleteNested: boolean) => Promise<unknown>;
  restore: (id: number) => Promise<unknown>;
}

export interface HistorySnapshot {
  /** What Undo would undo (null: nothing). */
  undo: HistoryEntry | null;
  /** What Redo would redo (null: nothing). */
  redo: HistoryEntry | null;
  /** A call of an undo or redo is under way (further presses wait for it). */
  busy: boolean;
}

/** Changes kept per image; the oldest is forgotten beyond it. */
export const HISTORY_LIMIT = 200;

/**
 * The undo and redo stacks of one user's changes to the annotations of one open image, in memory
 * (issue 29 item 5): a new change drops the redo stack; an undo or redo moves its entry only once
 * the server said yes, so a refusal (a locked read, a taken line pair) leaves both stacks as they
 * were; one call at a time. Cleared when the image changes (a new history per store) or the
 * annotations lock.
 */
export class AnnotationHistory extends TypedEmitter<{ change: HistorySnapshot }> {
  private done: HistoryEntry[] = [];
  private undone: HistoryEntry[] = [];
  private busy = false;
  private current: HistorySnapshot = { undo: null, redo: null, busy: false };

  get snapshot(): HistorySnapshot {
    return this.current;
  }

  subscribe = (listener: () => void): (() => void) => this.on('change', listener);

  /** A change the user made: on top of the undo stack; the redo stack is dropped. */
  record(entry: HistoryEntry): void {
    this.done.push(entry);
    if (this.done.length > HISTORY_LIMIT) this.done.shift();
    this.undone = [];
    this.changed();
  }

  clear(): void {
    if (this.done.length === 0 && this.undone.length === 0) return;
    this.done = [];
    this.undone = [];
    this.changed();
  }

  /** Undoes the last change; false when there is none or a call is under way. Rejects with the server's error. */
  undo(ops: HistoryOps): Promise<boolean> {
    const entry = this.done.at(-1);
    if (!entry) return Promise.resolve(false);
    return this.run(entry.kind === 'create' ? () => ops.remove(entry.id, false) : () => ops.restore(entry.id), () => {
      this.done.pop();
      this.undone.push(entry);
    });
  }

  /** Undoes `entry` only while it is the last change (the delete toast's Undo, once other changes came: false). */
  undoIfLast(entry: HistoryEntry, ops: HistoryOps): Promise<boolean> {
    return this.done.at(-1) === entry ? this.undo(ops) : Promise.resolve(false);
  }

  /** Redoes the last undone change; false when there is none or a call is under way. */
  redo(ops: HistoryOps): Promise<boolean> {
    const entry = this.undone.at(-1);
    if (!entry) return Promise.resolve(false);
    return this.run(
      entry.kind === 'create' ? () => ops.restore(entry.id) : () => ops.remove(entry.id, entry.deleteNested),
      () => {
        this.undone.pop();
        this.done.push(entry);
      },
    );
  }

  private async run(call: () => Promise<unknown>, move: () => void): Promise<boolean> {
    if (this.busy) return false;
    this.busy = true;
    this.changed();
    try {
      await call();
      move();
      return true;
    } finally {
      this.busy = false;
      this.changed();
    }
  }

  private changed(): void {
    this.current = { undo: this.done.at(-1) ?? null, redo: this.undone.at(-1) ?? null, busy: this.busy };
    this.emit('change', this.current);
  }
}
