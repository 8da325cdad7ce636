import { CLASS_COLOR_SWATCHES, type AnnotationClassInput } from '@lamina/domain';

/**
 * Pure edits of one annotation-class list (doc 1 §2.6, §4). Indexes are positions in the whole
 * list, deleted classes included, as the domain's validation reports them. Classes marked deleted
 * stay in the list (the server needs them) but are not shown.
 */

type ClassList = readonly AnnotationClassInput[];

export function isVisible(c: AnnotationClassInput): boolean {
  return c.deleted !== true;
}

/** Sort orders 0..n-1 over the shown classes, in list order. */
function renumber(list: AnnotationClassInput[]): AnnotationClassInput[] {
  let order = 0;
  return list.map((c) => {
    if (!isVisible(c)) return c;
    const next = c.sortOrder === order ? c : { ...c, sortOrder: order };
    order += 1;
    return next;
  });
}

/** The first swatch no shown class uses yet, else the swatches in turn. */
export function nextClassColor(list: ClassList): string {
  const used = new Set(list.filter(isVisible).map((c) => c.color.toUpperCase()));
  return (
    CLASS_COLOR_SWATCHES.find((s) => !used.has(s)) ??
    CLASS_COLOR_SWATCHES[list.length % CLASS_COLOR_SWATCHES.length] ??
    '#87FF01'
  );
}

/** Can a class of this name be added? Not when blank or when a shown class has it (any case). */
export function canAddClass(list: ClassList, name: string): boolean {
  const key = name.trim().toLowerCase();
  return key !== '' && !list.some((c) => isVisible(c) && c.name.trim().toLowerCase() === key);
}

export function addClass(list: ClassList, name: string, color = nextClassColor(list)): AnnotationClassInput[] {
  const sortOrder = list.filter(isVisible).length;
  return renumber([...list, { name: name.trim(), color, sortOrder, enabled: true }]);
}

export function updateClass(
  list: ClassList,
  index: number,
  patch: Partial<Pick<AnnotationClassInput, 'name' | 'color' | 'enabled'>>,
): AnnotationClassInput[] {
  return list.map((c, i) => (i === index ? { ...c, ...patch } : c));
}

/** Swaps the class with the shown class above (-1) or below (+1). */
export function moveClass(list: ClassList, index: number, direction: -1 | 1): AnnotationClassInput[] {
  const shown = list.map((c, i) => (isVisible(c) ? i : -1)).filter((i) => i >= 0);
  const at = shown.indexOf(index);
  const target = shown[at + direction];
  if (at < 0 || target === undefined) return [...list];
  const next = [...list];
  const a = next[index];
  const b = next[target];
  if (!a || !b) return next;
  next[index] = b;
  next[target] = a;
  return renumber(next);
}

/** A class with an id is marked deleted; one without an id is dropped (doc 1 §4). */
export function deleteClass(list: ClassList, index: number): AnnotationClassInput[] {
  const target = list[index];
  if (!target) return [...list];
  const next = target.id === undefined ? list.filter((_, i) => i !== index) : updateClassDeleted(list, index);
  return renumber(next);
}

function updateClassDeleted(list: ClassList, index: number): AnnotationClassInput[] {
  return list.map((c, i) => (i === index ? { ...c, deleted: true } : c));
}

/** Delete is offered only when the class has no annotations: count 0 or unknown (doc 1 §4). */
export function canDeleteClass(c: AnnotationClassInput, counts: ReadonlyMap<number, number>): boolean {
  if (c.id === undefined) return true;
  const count = counts.get(c.id);
  return count === undefined || count === 0;
}
