import { describe, expect, it } from 'vitest';
import { AnnotationHistory, HISTORY_LIMIT, type HistoryEntry, type HistoryOps } from './annotationHistory';
import { historyKeyFor } from './annotationRules';
import { historyLabel } from './useAnnotationHistory';

/** Server calls that log what they were asked and answer as told. */
function fakeOps(refuse: { message: string } | null = null) {
  const calls: string[] = [];
  let pending: (() => void) | null = null;
  let hold = false;
  const answer = (call: string) => {
    calls.push(call);
    if (refuse) return Promise.reject(new Error(refuse.message));
    if (!hold) return Promise.resolve();
    return new Promise<void>((resolve) => (pending = resolve));
  };
  const ops: HistoryOps = {
    remove: (id, deleteNested) => answer(`DELETE ${id}${deleteNested ? ' with points' : ''}`),
    restore: (id) => answer(`RESTORE ${id}`),
  };
  return {
    ops,
    calls,
    holdAnswers: () => (hold = true),
    release: () => pending?.(),
  };
}

const created = (id: number): HistoryEntry => ({ kind: 'create', id, type: 'POINT' });
const deleted = (id: number, deleteNested = false): HistoryEntry => ({
  kind: 'delete',
  id,
  type: 'HPF',
  deleteNested,
});

describe('AnnotationHistory (issue 29 item 5)', () => {
  it('undoes a create by a delete without its points and a delete by a restore; redo replays them', async () => {
    const history = new AnnotationHistory();
    const server = fakeOps();
    history.record(created(1));
    history.record(deleted(2, true));
    expect(history.snapshot).toEqual({ undo: deleted(2, true), redo: null, busy: false });

    expect(await history.undo(server.ops)).toBe(true);
    expect(await history.undo(server.ops)).toBe(true);
    expect(await history.undo(server.ops)).toBe(false);
    expect(history.snapshot).toEqual({ undo: null, redo: created(1), busy: false });
    expect(await history.redo(server.ops)).toBe(true);
    expect(await history.redo(server.ops)).toBe(true);
    expect(await history.redo(server.ops)).toBe(false);
    expect(server.calls).toEqual(['RESTORE 2', 'DELETE 1', 'RESTORE 1', 'DELETE 2 with points']);
    expect(history.snapshot).toEqual({ undo: deleted(2, true), redo: null, busy: false });
  });

  it('drops the redo stack on a new change', async () => {
    const history = new AnnotationHistory();
    const server = fakeOps();
    history.record(created(1));
    history.record(created(2));
    await history.undo(server.ops);
    expect(history.snapshot.redo).toEqual(created(2));
    history.record(created(3));
    expect(history.snapshot).toEqual({ undo: created(3), redo: null, busy: false });
    expect(await history.redo(server.ops)).toBe(false);
    expect(server.calls).toEqual(['DELETE 2']);
  });

  it('a refusal leaves both stacks as they were and rejects with the server’s message', async () => {
    const history = new AnnotationHistory();
    history.record(created(1));
    history.record(created(2));
    const message = 'Unable to delete annotation: The case is marked as scored';
    await expect(history.undo(fakeOps({ message }).ops)).rejects.toThrow(message);
    expect(history.snapshot).toEqual({ undo: created(2), redo: null, busy: false });
    // Once the server says yes again, the same entry is undone.
    const server = fakeOps();
    await history.undo(server.ops);
    expect(server.calls).toEqual(['DELETE 2']);
  });

  it('makes one call at a time: presses while one is under way do nothing', async () => {
    const history = new AnnotationHistory();
    const server = fakeOps();
    server.holdAnswers();
    history.record(created(1));
    history.record(created(2));
    const first = history.undo(server.ops);
    expect(history.snapshot.busy).toBe(true);
    expect(await history.undo(server.ops)).toBe(false);
    expect(await history.redo(server.ops)).toBe(false);
    server.release();
    expect(await first).toBe(true);
    expect(server.calls).toEqual(['DELETE 2']);
    expect(history.snapshot).toEqual({ undo: created(1), redo: created(2), busy: false });
  });

  it('the delete toast’s Undo undoes its delete only while it is the last change', async () => {
    const history = new AnnotationHistory();
    const server = fakeOps();
    const entry = deleted(7);
    history.record(entry);
    history.record(created(8));
    expect(await history.undoIfLast(entry, server.ops)).toBe(false);
    expect(server.calls).toEqual([]);
    await history.undo(server.ops);
    expect(await history.undoIfLast(entry, server.ops)).toBe(true);
    expect(server.calls).toEqual(['DELETE 8', 'RESTORE 7']);
  });

  it('clear forgets both stacks (the annotations locked); the oldest change goes beyond the limit', async () => {
    const history = new AnnotationHistory();
    const server = fakeOps();
    history.record(created(1));
    await history.undo(server.ops);
    history.record(created(2));
    history.clear();
    expect(history.snapshot).toEqual({ undo: null, redo: null, busy: false });

    for (let id = 1; id <= HISTORY_LIMIT + 1; id++) history.record(created(id));
    let undone = 0;
    while (await history.undo(server.ops)) undone++;
    expect(undone).toBe(HISTORY_LIMIT);
    expect(server.calls.at(-1)).toBe('DELETE 2');
  });

  it('names the change in the tooltips', () => {
    expect(historyLabel('Undo', null)).toBe('Undo');
    expect(historyLabel('Undo', { kind: 'create', id: 1, type: 'MULTILINE' })).toBe('Undo adding the line measurement');
    expect(historyLabel('Redo', deleted(2, true))).toBe('Redo deleting the HPF and its points');
  });
});

describe('the undo and redo keys', () => {
  const key = (k: string, mods: Partial<KeyboardEvent> = {}, target: EventTarget | null = document.body) => ({
    key: k,
    target,
    ctrlKey: false,
    metaKey: false,
    altKey: false,
    shiftKey: false,
    ...mods,
  });

  it('Ctrl+Z (⌘Z) undoes; Ctrl+Shift+Z and Ctrl+Y redo; without Ctrl or with Alt nothing', () => {
    expect(historyKeyFor(key('z', { ctrlKey: true }))).toBe('undo');
    expect(historyKeyFor(key('z', { metaKey: true }))).toBe('undo');
    expect(historyKeyFor(key('Z', { ctrlKey: true, shiftKey: true }))).toBe('redo');
    expect(historyKeyFor(key('y', { ctrlKey: true }))).toBe('redo');
    expect(historyKeyFor(key('Y', { ctrlKey: true, shiftKey: true }))).toBeNull();
    expect(historyKeyFor(key('z'))).toBeNull();
    expect(historyKeyFor(key('z', { ctrlKey: true, altKey: true }))).toBeNull();
  });

  it('act after a click on a sidebar button, not while typing or in an open dialog', () => {
    const button = document.createElement('button');
    const input = document.createElement('input');
    const textarea = document.createElement('textarea');
    const dialog = document.createElement('div');
    dialog.setAttribute('role', 'dialog');
    const inDialog = document.createElement('button');
    dialog.append(inDialog);
    document.body.append(button, input, textarea, dialog);
    expect(historyKeyFor(key('z', { ctrlKey: true }, button))).toBe('undo');
    expect(historyKeyFor(key('z', { ctrlKey: true }, input))).toBeNull();
    expect(historyKeyFor(key('z', { ctrlKey: true }, textarea))).toBeNull();
    expect(historyKeyFor(key('y', { ctrlKey: true }, inDialog))).toBeNull();
    document.body.replaceChildren();
  });
});
