import type { AnnotationClassInput } from '@lamina/domain';
import { describe, expect, it } from 'vitest';
import {
  addClass,
  canAddClass,
  canDeleteClass,
  deleteClass,
  moveClass,
  nextClassColor,
  updateClass,
} from './classListOps';

const saved = (id: number, name: string, sortOrder: number): AnnotationClassInput => ({
  id,
  name,
  color: '#87FF01',
  sortOrder,
  enabled: true,
  deleted: false,
});

describe('annotation class list edits', () => {
  it('adds a class at the end with the next free swatch', () => {
    const list = addClass([saved(1, 'A', 0)], '  New ');
    expect(list[1]).toEqual({ name: 'New', color: '#FF001E', sortOrder: 1, enabled: true });
  });

  it('refuses blank and duplicate names, ignoring deleted classes', () => {
    const list = [saved(1, 'Goblet', 0), { ...saved(2, 'Old', 1), deleted: true }];
    expect(canAddClass(list, '  ')).toBe(false);
    expect(canAddClass(list, 'goblet ')).toBe(false);
    expect(canAddClass(list, 'Old')).toBe(true);
  });

  it('marks a saved class deleted and drops a new one', () => {
    const list = addClass([saved(1, 'A', 0), saved(2, 'B', 1)], 'C');
    const afterSaved = deleteClass(list, 0);
    expect(afterSaved).toHaveLength(3);
    expect(afterSaved[0]).toMatchObject({ id: 1, deleted: true });
    expect(afterSaved.filter((c) => !c.deleted).map((c) => [c.name, c.sortOrder])).toEqual([
      ['B', 0],
      ['C', 1],
    ]);
    const afterNew = deleteClass(afterSaved, 2);
    expect(afterNew.map((c) => c.name)).toEqual(['A', 'B']);
  });

  it('moves over deleted classes and renumbers', () => {
    const list = [saved(1, 'A', 0), { ...saved(2, 'X', 1), deleted: true }, saved(3, 'B', 1)];
    const moved = moveClass(list, 2, -1);
    expect(moved.map((c) => c.name)).toEqual(['B', 'X', 'A']);
    expect(moved.filter((c) => !c.deleted).map((c) => c.sortOrder)).toEqual([0, 1]);
    expect(moveClass(moved, 0, -1).map((c) => c.name)).toEqual(['B', 'X', 'A']);
  });

  it('renames, recolours and disables in place', () => {
    const list = updateClass([saved(1, 'A', 0)], 0, { name: 'B', color: '#013BFA', enabled: false });
    expect(list[0]).toMatchObject({ id: 1, name: 'B', color: '#013BFA', enabled: false });
  });

  it('offers delete only without annotations', () => {
    const counts = new Map([
      [1, 0],
      [2, 4],
    ]);
    expect(canDeleteClass(saved(1, 'A', 0), counts)).toBe(true);
    expect(canDeleteClass(saved(2, 'B', 1), counts)).toBe(false);
    expect(canDeleteClass(saved(3, 'C', 2), counts)).toBe(true);
    expect(canDeleteClass({ name: 'N', color: '#87FF01', sortOrder: 0, enabled: true }, counts)).toBe(true);
  });

  it('cycles the swatches when all are used', () => {
    const colors = ['#87FF01', '#FF001E', '#FF9F00', '#FDEB03', '#013BFA', '#8601FC', '#4A90E2', '#00FFFF', '#09FF98'];
    const list = colors.map((color, i) => ({ ...saved(i + 1, `C${i}`, i), color }));
    expect(nextClassColor(list)).toBe('#87FF01');
  });
});
