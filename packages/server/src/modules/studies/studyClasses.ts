import { sql } from 'kysely';
import { STUDY_MESSAGES, type AnnotationClassInput, type AnnotationClassType } from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import { BadRequestError, ConflictError } from '../../platform/errors.js';

/** A live annotation class of one list, as stored. */
export interface StoredClass {
  id: number;
  name: string;
  color: string;
  sortOrder: number;
  enabled: boolean;
}

/** A class of a list after the edit: an existing one (id) or a new one (no id). */
export interface PlannedClass {
  id?: number;
  name: string;
  color: string;
  sortOrder: number;
  enabled: boolean;
}

export interface ClassListPlan {
  classes: PlannedClass[];
  /** Ids of existing classes the edit deletes (marked deleted, never removed). */
  deletions: number[];
}

/**
 * Applies a class list sent by the form to the stored list (spec doc 1 §4): classes without an id
 * are added, classes with an id are renamed, recoloured, reordered, disabled or re-enabled, a class
 * with an id and `deleted: true` is deleted, one without an id and `deleted: true` is dropped.
 * The list must name every stored class (else someone changed it meanwhile: 409), each once, and
 * only classes of this study and list. Order follows sortOrder (ties: position), renumbered 0….
 */
export function planClassList(stored: readonly StoredClass[], input: readonly AnnotationClassInput[]): ClassListPlan {
  const byId = new Map(stored.map((c) => [c.id, c]));
  const seen = new Set<number>();
  const deletions: number[] = [];
  const kept: { c: PlannedClass; position: number }[] = [];
  input.forEach((item, position) => {
    if (item.id !== undefined) {
      if (!byId.has(item.id)) throw new BadRequestError(STUDY_MESSAGES.classNotInList);
      if (seen.has(item.id)) throw new BadRequestError(STUDY_MESSAGES.classListedTwice);
      seen.add(item.id);
      if (item.deleted) {
        deletions.push(item.id);
        return;
      }
    } else if (item.deleted) {
      return;
    }
    const c: PlannedClass = {
      name: item.name.trim(),
      color: item.color.toUpperCase(),
      sortOrder: item.sortOrder,
      enabled: item.enabled,
    };
    if (item.id !== undefined) c.id = item.id;
    kept.push({ c, position });
  });
  if (stored.some((c) => !seen.has(c.id))) throw new ConflictError(STUDY_MESSAGES.classesOutdated);
  kept.sort((a, b) => a.c.sortOrder - b.c.sortOrder || a.position - b.position);
  return { classes: kept.map(({ c }, index) => ({ ...c, sortOrder: index })), deletions };
}

/** The audit and comparison form of a class: the same keys in the same order for stored and planned. */
export function classSnapshot(c: PlannedClass | StoredClass): {
  id: number | null;
  name: string;
  color: string;
  sortOrder: number;
  enabled: boolean;
} {
  return { id: c.id ?? null, name: c.name, color: c.color, sortOrder: c.sortOrder, enabled: c.enabled };
}

/**
 * Writes a planned list: deletions first, then renames through a temporary name (so two classes can
 * swap names without tripping the unique index of live names), then the other fields, then inserts.
 */
export async function applyClassPlan(
  tx: Db,
  studyId: number,
  type: AnnotationClassType,
  stored: readonly StoredClass[],
  plan: ClassListPlan,
): Promise<void> {
  const byId = new Map(stored.map((c) => [c.id, c]));
  const now = sql<Date>`now()`;
  if (plan.deletions.length > 0) {
    await tx
      .updateTable('annotation_classes')
      .set({ deleted: true, enabled: false, updated_at: now })
      .where('study_id', '=', studyId)
      .where('id', 'in', plan.deletions)
      .execute();
  }
  const existing = plan.classes.filter((c): c is PlannedClass & { id: number } => c.id !== undefined);
  const renamed = existing.filter((c) => byId.get(c.id)?.name !== c.name);
  for (const c of renamed) {
    await tx
      .updateTable('annotation_classes')
      .set({ name: `~renaming~${c.id}~${Date.now()}` })
      .where('id', '=', c.id)
      .execute();
  }
  for (const c of existing) {
    const before = byId.get(c.id);
    if (before && JSON.stringify(classSnapshot(before)) === JSON.stringify(classSnapshot(c))) continue;
    await tx
      .updateTable('annotation_classes')
      .set({ name: c.name, color: c.color, sort_order: c.sortOrder, enabled: c.enabled, updated_at: now })
      .where('id', '=', c.id)
      .execute();
  }
  const added = plan.classes.filter((c) => c.id === undefined);
  if (added.length > 0) {
    await tx
      .insertInto('annotation_classes')
      .values(
        added.map((c) => ({
          study_id: studyId,
          type,
          name: c.name,
          color: c.color,
          sort_order: c.sortOrder,
          enabled: c.enabled,
        })),
      )
      .execute();
  }
}
