import { READER_COLORS } from '@lamina/domain';
import { describe, expect, it } from 'vitest';
import { AnnotationStore } from './annotationStore';
import { makeAnnotation } from './testData';

const hpf = (id: number, classId: number | null, userId = 9) =>
  makeAnnotation({ id, annotationType: 'HPF', annotationClassId: classId, radius: 500, userId });
const point = (id: number, parentId: number | null, classId: number | null, userId = 9) =>
  makeAnnotation({ id, annotationType: 'POINT', parentId, annotationClassId: classId, userId });

function loaded() {
  const store = new AnnotationStore(13);
  store.setClasses([1], [10, 11]);
  store.load({
    imageId: 13,
    locked: false,
    authors: [
      { id: 9, displayName: 'Rita Reader' },
      { id: 10, displayName: 'Rob Reader' },
    ],
    // Compact rows (null fields omitted), out of id order.
    annotations: [
      {
        id: 5,
        imageId: 13,
        annotationType: 'POINT',
        userId: 9,
        geometry: { type: 'Point', coordinates: [1, 2] },
        parentId: 1,
        annotationClassId: 10,
        createdAt: '',
      },
      hpf(1, 1),
      hpf(2, null),
      point(3, 1, 11),
      point(4, null, 10, 10),
      point(6, 2, 99),
    ],
  });
  return store;
}

describe('AnnotationStore', () => {
  it('loads compact rows once into views (absent fields null), in id order', () => {
    const store = loaded();
    const { annotations, loaded: done, authors } = store.snapshot;
    expect(done).toBe(true);
    expect(annotations.map((a) => a.id)).toEqual([1, 2, 3, 4, 5, 6]);
    const compact = store.get(5)!;
    expect(compact.source).toBe('CR');
    expect(compact.text).toBeNull();
    expect(compact.radius).toBeNull();
    expect(authors).toHaveLength(2);
  });

  it('adds a created annotation with the points it took, and removes deleted ones with their reparenting', () => {
    const store = loaded();
    const changes: string[] = [];
    store.on('data', (c) =>
      changes.push(c.kind === 'reset' ? 'reset' : `+${c.added.length}-${c.removed.length}~${c.reparented.length}`),
    );
    store.add(hpf(7, 1), [{ id: 4, parentId: 7 }]);
    expect(store.get(4)?.parentId).toBe(7);
    expect(store.snapshot.annotations.map((a) => a.id)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    store.remove([7], [{ id: 4, parentId: null }]);
    expect(store.get(7)).toBeUndefined();
    expect(store.get(4)?.parentId).toBeNull();
    expect(changes).toEqual(['+1-0~1', '+0-1~1']);
  });

  it("hides an HPF class's HPFs and their points, one HPF with its points, or one point class of one HPF", () => {
    const store = loaded();
    const drawn = () => store.snapshot.annotations.filter((a) => store.isDrawn(a)).map((a) => a.id);
    expect(drawn()).toEqual([1, 2, 3, 4, 5, 6]);
    store.setHidden({ kind: 'hpfClass', classId: 1 }, true);
    expect(drawn()).toEqual([2, 4, 6]);
    store.setHidden({ kind: 'hpfClass', classId: 1 }, false);
    store.setHidden({ kind: 'hpf', hpfId: 2 }, true);
    expect(drawn()).toEqual([1, 3, 4, 5]);
    store.setHidden({ kind: 'hpf', hpfId: 2 }, false);
    store.setHidden({ kind: 'points', hpfId: 1, classId: 10 }, true);
    expect(drawn()).toEqual([1, 2, 3, 4, 6]);
    // The Orphan, and 'Other' (a point of a class not in the study counts as Other).
    store.setHidden({ kind: 'points', hpfId: 1, classId: 10 }, false);
    store.setHidden({ kind: 'hpf', hpfId: null }, true);
    expect(drawn()).toEqual([1, 2, 3, 5, 6]);
    store.setHidden({ kind: 'hpf', hpfId: null }, false);
    store.setHidden({ kind: 'points', hpfId: 2, classId: null }, true);
    expect(drawn()).toEqual([1, 2, 3, 4, 5]);
    // HPFs without a study class are the 'Other' HPF class.
    store.setHidden({ kind: 'points', hpfId: 2, classId: null }, false);
    store.setHidden({ kind: 'hpfClass', classId: null }, true);
    expect(drawn()).toEqual([1, 3, 4, 5]);
  });

  it("filters by reader: the snapshot's shown list and what is drawn", () => {
    const store = loaded();
    store.setAuthor(10);
    expect(store.snapshot.shown.map((a) => a.id)).toEqual([4]);
    expect(store.snapshot.annotations.filter((a) => store.isDrawn(a)).map((a) => a.id)).toEqual([4]);
    store.setAuthor(null);
    expect(store.snapshot.shown).toHaveLength(6);
  });

  it('all readers shown (issue 29 item 12): each reader’s colour by their place in the list; one reader: class colours', () => {
    const store = loaded();
    const classColour = () => '#123456';
    const rita = store.get(1)!;
    const rob = store.get(4)!;
    expect(store.snapshot.readers?.map((r) => [r.displayName, r.color])).toEqual([
      ['Rita Reader', READER_COLORS[0]],
      ['Rob Reader', READER_COLORS[1]],
    ]);
    expect(store.colourOf(rita, classColour)).toBe(READER_COLORS[0]);
    expect(store.colourOf(rob, classColour)).toBe(READER_COLORS[1]);
    // An author the list did not name (drawn since it loaded) keeps the class colour.
    expect(store.colourOf(makeAnnotation({ userId: 77 }), classColour)).toBe('#123456');
    store.setAuthor(10);
    expect(store.snapshot.readers).toBeNull();
    expect(store.colourOf(rob, classColour)).toBe('#123456');
    store.setAuthor(null);
    expect(store.colourOf(rob, classColour)).toBe(READER_COLORS[1]);
    // A reader's own list names only them: class colours, no legend.
    store.load({
      imageId: 13,
      locked: false,
      authors: [{ id: 9, displayName: 'Rita Reader' }],
      annotations: [hpf(1, 1)],
    });
    expect(store.snapshot.readers).toBeNull();
    expect(store.colourOf(store.get(1)!, classColour)).toBe('#123456');
  });

  it('keeps one highlight and tells the map only when it changes', () => {
    const store = loaded();
    const seen: unknown[] = [];
    store.on('highlight', (h) => seen.push(h));
    store.setHighlight({ kind: 'hpf', hpfId: 1 });
    store.setHighlight({ kind: 'hpf', hpfId: 1 });
    store.setHighlight(null);
    expect(seen).toEqual([{ kind: 'hpf', hpfId: 1 }, null]);
  });
});
