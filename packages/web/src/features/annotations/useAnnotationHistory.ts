import { ANNOTATION_MESSAGES, type AnnotationType } from '@lamina/domain';
import { useQueryClient } from '@tanstack/react-query';
import { useCallback, useMemo, useSyncExternalStore } from 'react';
import { errorMessage } from '../../api/ApiError';
import { showActionToast, showToast } from '../../components/appToaster';
import { annotationKeys, deleteAnnotation, historyOps, type DeleteInput } from './api';
import type { HistoryEntry, HistorySnapshot } from './annotationHistory';
import type { AnnotationSession } from './AnnotationSession';

/** The keys of undo and redo, as the toolbar's tooltips and the shortcuts list name them. */
export const UNDO_KEYS = 'Ctrl+Z';
export const REDO_KEYS = 'Ctrl+Shift+Z or Ctrl+Y';

const TYPE_NAMES: Record<AnnotationType, string> = {
  HPF: 'HPF',
  POINT: 'point',
  TEXT: 'text',
  ELLIPSE: 'ellipse',
  LINE: 'line',
  MULTILINE: 'line measurement',
  FREEHAND: 'freehand region',
};

/** What undoing or redoing an entry does, for the tooltips: 'Undo adding the HPF'. */
export function historyLabel(which: 'Undo' | 'Redo', entry: HistoryEntry | null): string {
  if (!entry) return which;
  const what = `the ${TYPE_NAMES[entry.type]}${entry.kind === 'delete' && entry.deleteNested ? ' and its points' : ''}`;
  return `${which} ${entry.kind === 'create' ? 'adding' : 'deleting'} ${what}`;
}

export interface HistoryControls {
  snapshot: HistorySnapshot;
  /** The user may change annotations here: the permission to create and an open read. */
  enabled: boolean;
  canUndo: boolean;
  canRedo: boolean;
  undo: () => void;
  redo: () => void;
  /** Deletes through the server, records the change and offers Undo in a toast (issue 29 item 6). */
  deleteWithUndo: (input: DeleteInput) => Promise<void>;
}

/**
 * The undo and redo of the user's annotation changes on the open image, for the keys, the toolbar
 * and the delete toast alike (one path: AnnotationHistory with the server calls of api.ts). A
 * refusal shows the server's message and reloads the list, so a read locked elsewhere shows as
 * locked (and the history is cleared) instead of a local state the server does not hold.
 */
export function useAnnotationHistory(session: AnnotationSession | null): HistoryControls | null {
  const queryClient = useQueryClient();
  const history = session?.history ?? null;
  const store = session?.store ?? null;
  const empty = useMemo(
    () => ({ subscribe: () => () => undefined, snapshot: { undo: null, redo: null, busy: false } }),
    [],
  );
  const snapshot = useSyncExternalStore(history?.subscribe ?? empty.subscribe, () =>
    history ? history.snapshot : empty.snapshot,
  );
  const locked = useSyncExternalStore(store?.subscribe ?? empty.subscribe, () => store?.snapshot.locked ?? false);
  const enabled = !!session && session.permissions.create && !locked;
  const ops = useMemo(() => (store ? historyOps(store) : null), [store]);

  const refused = useCallback(
    (e: unknown) => {
      void showToast(errorMessage(e), 'danger');
      if (store) void queryClient.invalidateQueries({ queryKey: annotationKeys.list(store.imageId) });
    },
    [queryClient, store],
  );
  const undo = useCallback(() => {
    if (history && ops && enabled) history.undo(ops).catch(refused);
  }, [history, ops, enabled, refused]);
  const redo = useCallback(() => {
    if (history && ops && enabled) history.redo(ops).catch(refused);
  }, [history, ops, enabled, refused]);

  const deleteWithUndo = useCallback(
    async (input: DeleteInput) => {
      if (!history || !ops || !store) return;
      const type = store.get(input.id)?.annotationType ?? 'POINT';
      const response = await deleteAnnotation(store, input);
      const entry: HistoryEntry = { kind: 'delete', id: input.id, type, deleteNested: input.deleteNested };
      history.record(entry);
      const points = response.deletedIds.length - 1;
      const message = `${ANNOTATION_MESSAGES.deleted}${points > 0 ? ` with its ${points} point${points === 1 ? '' : 's'}` : ''}`;
      // The toast's Undo is the history's undo of this delete, while it is the last change; a later
      // change takes the toast away (Undo would no longer mean this delete).
      let unsubscribe: (() => void) | null = null;
      const dismiss = await showActionToast(
        message,
        {
          text: 'Undo',
          icon: 'undo',
          onClick: () => {
            history.undoIfLast(entry, ops).catch(refused);
          },
        },
        () => unsubscribe?.(),
      );
      if (history.snapshot.undo !== entry) dismiss();
      else
        unsubscribe = history.subscribe(() => {
          if (history.snapshot.undo !== entry && !history.snapshot.busy) dismiss();
        });
    },
    [history, ops, store, refused],
  );

  if (!session || !history) return null;
  return {
    snapshot,
    enabled,
    canUndo: enabled && snapshot.undo !== null && !snapshot.busy,
    canRedo: enabled && snapshot.redo !== null && !snapshot.busy,
    undo,
    redo,
    deleteWithUndo,
  };
}
