import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  annotationRequestProblem,
  ANNOTATION_MESSAGES,
  buildHpfTree,
  canAddAnnotation,
  celiacRatio,
  celiacTable,
  formatLengthUm,
  hexToRgb,
  hpfRadiusPx,
  hpfNodeLabel,
  hpfTreeTsv,
  nextMultilineSelection,
  parentFinder,
  parentHpfOf,
  polylineLengthUm,
  READER_COLORS,
  readerKeys,
  rgbToHex,
  tiltFromWire,
  tiltToWire,
  toAnnotationView,
  type AnnotationView,
  type ClassRef,
} from '../src/index.js';

const cls = (id: number, name: string, sortOrder: number, enabled = true, color = '#87FF01'): ClassRef => ({
  id,
  name,
  color,
  sortOrder,
  enabled,
});

describe('HPF radius (doc 3 §9)', () => {
  it('is √(0.238 mm² / π) / mpp pixels: 275.24 µm at any pixel size', () => {
    expect(hpfRadiusPx(0.5, false)).toBeCloseTo(550.48, 2);
    expect(hpfRadiusPx(0.25, false)).toBeCloseTo(1100.97, 2);
    // The circle's area is 0.238 mm² whatever the pixel size.
    const r = hpfRadiusPx(0.2527, false) * 0.2527e-3; // mm
    expect(Math.PI * r * r).toBeCloseTo(0.238, 6);
  });
  it('is doubled for NASH studies', () => {
    expect(hpfRadiusPx(0.5, true)).toBeCloseTo(1100.97, 2);
  });
  it('is 100 px when the slide has no pixel size', () => {
    expect(hpfRadiusPx(null, false)).toBe(100);
    expect(hpfRadiusPx(0, true)).toBe(100);
    expect(hpfRadiusPx(Number.NaN, false)).toBe(100);
  });
});

describe('lengths in µm', () => {
  it('a line: its pixel length × mpp; shown in whole µm', () => {
    expect(
      polylineLengthUm(
        [
          [0, 0],
          [30, 40],
        ],
        0.5,
      ),
    ).toBe(25);
    expect(formatLengthUm(24.5)).toBe('25 µm');
    expect(formatLengthUm(24.49)).toBe('24 µm');
  });
  it('a multiline: the sum of its segments', () => {
    expect(
      polylineLengthUm(
        [
          [0, 0],
          [3, 4],
          [3, 14],
        ],
        2,
      ),
    ).toBe(30);
  });
  it('without a pixel size: the spec default resolution, 2e-7 m (0.2 µm)', () => {
    expect(
      polylineLengthUm(
        [
          [0, 0],
          [0, 100],
        ],
        null,
      ),
    ).toBeCloseTo(20, 9);
  });
  it('the tilt on the wire is the rotation + 90, and back', () => {
    expect(tiltToWire(30)).toBe(120);
    expect(tiltFromWire(tiltToWire(-12.5))).toBe(-12.5);
  });
});

describe('the multiline walk (doc 3 §4)', () => {
  const classes = [cls(3, 'Unit 2', 1), cls(1, 'Unit 1', 0), cls(9, 'Unit 3', 2, false), cls(4, 'Unit 4', 3)];
  it('starts at the first class, villus height', () => {
    expect(nextMultilineSelection(classes, [])).toEqual({ classId: 1, category: 'VILLUS_HEIGHT' });
  });
  it('goes villus height then crypt depth within a class, then the next class in order', () => {
    expect(nextMultilineSelection(classes, [{ annotationClassId: 1, multilineCategory: 'VILLUS_HEIGHT' }])).toEqual({
      classId: 1,
      category: 'CRYPT_DEPTH',
    });
    expect(
      nextMultilineSelection(classes, [
        { annotationClassId: 1, multilineCategory: 'VILLUS_HEIGHT' },
        { annotationClassId: 1, multilineCategory: 'CRYPT_DEPTH' },
      ]),
    ).toEqual({ classId: 3, category: 'VILLUS_HEIGHT' });
  });
  it('picks the next unused pair (a gap first) and skips disabled classes', () => {
    const used = [
      { annotationClassId: 1, multilineCategory: 'CRYPT_DEPTH' as const },
      { annotationClassId: 3, multilineCategory: 'VILLUS_HEIGHT' as const },
      { annotationClassId: 3, multilineCategory: 'CRYPT_DEPTH' as const },
    ];
    expect(nextMultilineSelection(classes, used)).toEqual({ classId: 1, category: 'VILLUS_HEIGHT' });
    used.push({ annotationClassId: 1, multilineCategory: 'VILLUS_HEIGHT' });
    expect(nextMultilineSelection(classes, used)).toEqual({ classId: 4, category: 'VILLUS_HEIGHT' });
  });
  it('is null when every pair is used or no class is enabled', () => {
    expect(nextMultilineSelection([cls(1, 'A', 0, false)], [])).toBeNull();
    expect(
      nextMultilineSelection(
        [cls(1, 'A', 0)],
        [
          { annotationClassId: 1, multilineCategory: 'VILLUS_HEIGHT' },
          { annotationClassId: 1, multilineCategory: 'CRYPT_DEPTH' },
        ],
      ),
    ).toBeNull();
  });
});

describe('the parent HPF of a point', () => {
  const hpfs = [
    { id: 5, centre: [100, 100], radius: 50 },
    { id: 2, centre: [160, 100], radius: 50 },
  ];
  it('is the containing HPF with the nearest centre; ties go to the lower id; none: Orphan (null)', () => {
    expect(parentHpfOf([110, 100], hpfs)).toBe(5);
    expect(parentHpfOf([140, 100], hpfs)).toBe(2);
    expect(parentHpfOf([130, 100], hpfs)).toBe(2);
    expect(parentHpfOf([100, 150], hpfs)).toBe(5); // on the circle counts as inside
    expect(parentHpfOf([300, 300], hpfs)).toBeNull();
  });
});

describe('the HPF tree (doc 3 §2, §3)', () => {
  const a = (p: Partial<AnnotationView> & Pick<AnnotationView, 'id' | 'annotationType'>) =>
    toAnnotationView({ imageId: 1, geometry: { type: 'Point', coordinates: [0, 0] }, createdAt: '', ...p });
  const hpfClasses = [cls(20, 'Peak', 1, true, '#013BFA'), cls(10, 'Background', 0)];
  const pointClasses = [cls(30, 'Eosinophil', 0, true, '#FF001E'), cls(31, 'Neutrophil', 1)];
  const annotations = [
    a({ id: 1, annotationType: 'HPF', annotationClassId: 20 }),
    a({ id: 2, annotationType: 'HPF', annotationClassId: 20, text: 'Densest' }),
    a({ id: 3, annotationType: 'HPF', annotationClassId: null }),
    a({ id: 4, annotationType: 'POINT', annotationClassId: 30, parentId: 1 }),
    a({ id: 5, annotationType: 'POINT', annotationClassId: 30, parentId: 1 }),
    a({ id: 6, annotationType: 'POINT', annotationClassId: 31, parentId: 1 }),
    a({ id: 7, annotationType: 'POINT', annotationClassId: null, parentId: 2 }),
    a({ id: 8, annotationType: 'POINT', annotationClassId: 30, parentId: null }),
    a({ id: 9, annotationType: 'POINT', annotationClassId: 30, parentId: 999 }), // its HPF is gone
    a({ id: 10, annotationType: 'LINE' }),
  ];
  const tree = buildHpfTree(annotations, hpfClasses, pointClasses);

  it('holds the HPF classes in study order, then Other for HPFs without a class', () => {
    expect(tree.classes.map((c) => [c.name, c.count, c.pointCount])).toEqual([
      ['Background', 0, 0],
      ['Peak', 2, 4],
      ['Other', 1, 0],
    ]);
  });
  it('names HPFs by their text or HPF n in drawing order, and counts their points by class (Other last)', () => {
    const peak = tree.classes[1]!;
    expect(peak.hpfs.map((h) => [h.name, h.count])).toEqual([
      ['HPF 1', 3],
      ['Densest', 1],
    ]);
    expect(peak.hpfs[0]!.points.map((p) => [p.name, p.count, p.pointIds])).toEqual([
      ['Eosinophil', 2, [4, 5]],
      ['Neutrophil', 1, [6]],
    ]);
    expect(peak.hpfs[1]!.points.map((p) => p.name)).toEqual(['Other']);
    expect(tree.classes[2]!.hpfs[0]!.name).toBe('HPF 3');
  });
  it('puts points in no (live) HPF under the reserved HPF Orphan', () => {
    expect(tree.orphan?.name).toBe('Orphan');
    expect(tree.orphan?.count).toBe(2);
    expect(tree.orphan?.points[0]?.pointIds).toEqual([8, 9]);
    expect(tree.totalHpfs).toBe(3);
    expect(tree.totalPoints).toBe(6);
    expect(buildHpfTree([], hpfClasses, pointClasses).orphan).toBeNull();
  });
  it('copies as tab-separated rows that paste into a spreadsheet', () => {
    const tsv = hpfTreeTsv(tree).split('\n');
    expect(tsv[0]).toBe('HPF class\tHPF\tPoint class\tCount');
    expect(tsv).toContain('Peak\tHPF 1\tEosinophil\t2');
    expect(tsv).toContain('\tOrphan\tEosinophil\t2');
    expect(tsv).toContain('Other\tHPF 3\t\t0');
  });
});

describe('the HPF tree with every reader shown (issue 29 item 12)', () => {
  const a = (p: Partial<AnnotationView> & Pick<AnnotationView, 'id' | 'annotationType'>) =>
    toAnnotationView({ imageId: 1, geometry: { type: 'Point', coordinates: [0, 0] }, createdAt: '', ...p });
  const hpfClasses = [cls(20, 'Peak', 0, true, '#013BFA')];
  const pointClasses = [cls(30, 'Eosinophil', 0, true, '#FF001E')];
  // Drawn in turns: reader 7's HPFs are 1 and 4, reader 9's 2, 3 and 5 (5 named by its text).
  const annotations = [
    a({ id: 1, annotationType: 'HPF', annotationClassId: 20, userId: 7 }),
    a({ id: 2, annotationType: 'HPF', annotationClassId: 20, userId: 9 }),
    a({ id: 3, annotationType: 'HPF', annotationClassId: 20, userId: 9 }),
    a({ id: 4, annotationType: 'HPF', annotationClassId: 20, userId: 7 }),
    a({ id: 5, annotationType: 'HPF', annotationClassId: 20, userId: 9, text: 'Densest' }),
    a({ id: 6, annotationType: 'POINT', annotationClassId: 30, parentId: 2, userId: 9 }),
  ];
  const authors = [
    { id: 9, displayName: 'Reader Nine' },
    { id: 7, displayName: 'Reader Seven' },
  ];

  it('numbers each reader’s HPFs in that reader’s drawing order: the numbers that reader sees', () => {
    const all = buildHpfTree(annotations, hpfClasses, pointClasses);
    expect(all.classes[0]!.hpfs.map((h) => [h.id, h.name])).toEqual([
      [1, 'HPF 1'],
      [2, 'HPF 1'],
      [3, 'HPF 2'],
      [4, 'HPF 2'],
      [5, 'Densest'],
    ]);
    // What each reader's own list gives (the server sends a reader only their own).
    for (const reader of [7, 9]) {
      const own = buildHpfTree(
        annotations.filter((x) => x.userId === reader),
        hpfClasses,
        pointClasses,
      );
      for (const h of own.classes[0]!.hpfs) expect(all.classes[0]!.hpfs.find((x) => x.id === h.id)?.name).toBe(h.name);
    }
    expect(all.classes[0]!.hpfs.every((h) => h.reader === null)).toBe(true);
  });

  it('with the readers, names and colours each HPF by its reader and lists the HPFs reader by reader', () => {
    const readers = readerKeys(authors);
    expect(readers.map((r) => r.color)).toEqual([READER_COLORS[0], READER_COLORS[1]]);
    const tree = buildHpfTree(annotations, hpfClasses, pointClasses, readers);
    const hpfs = tree.classes[0]!.hpfs;
    expect(hpfs.map(hpfNodeLabel)).toEqual([
      'Reader Nine · HPF 1',
      'Reader Nine · HPF 2',
      'Reader Nine · Densest',
      'Reader Seven · HPF 1',
      'Reader Seven · HPF 2',
    ]);
    const [nine, seven] = READER_COLORS;
    expect(hpfs.map((h) => h.color)).toEqual([nine, nine, nine, seven, seven]);
    expect(hpfs[0]!.points[0]?.pointIds).toEqual([6]);
    const tsv = hpfTreeTsv(tree).split('\n');
    expect(tsv[0]).toBe('Reader\tHPF class\tHPF\tPoint class\tCount');
    expect(tsv).toContain('Reader Nine\tPeak\tHPF 1\tEosinophil\t1');
    expect(tsv).toContain('Reader Seven\tPeak\tHPF 1\t\t0');
  });

  it('gives readers distinct colours up to the palette’s size, then repeats', () => {
    const many = readerKeys(
      Array.from({ length: READER_COLORS.length + 1 }, (_, i) => ({ id: i, displayName: `r${i}` })),
    );
    expect(new Set(many.slice(0, READER_COLORS.length).map((r) => r.color)).size).toBe(READER_COLORS.length);
    expect(many[READER_COLORS.length]!.color).toBe(READER_COLORS[0]);
    expect(hpfNodeLabel({ name: 'HPF 1', reader: null })).toBe('HPF 1');
  });
});

describe('celiac line measurements', () => {
  const classes = [cls(2, 'Unit 2', 1), cls(1, 'Unit 1', 0)];
  const line = (id: number, classId: number, category: 'VILLUS_HEIGHT' | 'CRYPT_DEPTH', length: number) => ({
    id,
    annotationType: 'MULTILINE' as const,
    annotationClassId: classId,
    multilineCategory: category,
    length,
  });
  it('one row per class in order: villus height, crypt depth (newest line) and Vh:Cd to one decimal', () => {
    const rows = celiacTable(classes, [
      line(1, 1, 'VILLUS_HEIGHT', 400.4),
      line(2, 1, 'CRYPT_DEPTH', 149.6),
      line(3, 2, 'VILLUS_HEIGHT', 100),
      line(4, 1, 'VILLUS_HEIGHT', 450.2),
    ]);
    expect(rows.map((r) => [r.name, r.villusHeight, r.cryptDepth, r.ratio])).toEqual([
      ['Unit 1', 450.2, 149.6, '3.0'],
      ['Unit 2', 100, null, '—'],
    ]);
  });
  it('the ratio is of the whole µm shown, and a dash without a depth', () => {
    expect(celiacRatio(451, 150)).toBe('3.0');
    expect(celiacRatio(455, 150)).toBe('3.0');
    expect(celiacRatio(460, 150)).toBe('3.1');
    expect(celiacRatio(10, 0.2)).toBe('—');
  });
});

describe('the create request on its own', () => {
  const image = { width: 100, height: 50 };
  const base = { annotationClassId: null, multilineCategory: null, text: null, radiusX: null, radiusY: null };
  it('accepts each type in its geometry', () => {
    expect(
      annotationRequestProblem(
        { ...base, annotationType: 'POINT', geometry: { type: 'Point', coordinates: [100, 50] } },
        image,
      ),
    ).toBeNull();
    expect(
      annotationRequestProblem(
        {
          ...base,
          annotationType: 'FREEHAND',
          geometry: {
            type: 'Polygon',
            coordinates: [
              [
                [0, 0],
                [10, 0],
                [10, 10],
                [0, 0],
              ],
            ],
          },
        },
        image,
      ),
    ).toBeNull();
  });
  it('refuses a vertex beyond the image and a text annotation without text', () => {
    expect(
      annotationRequestProblem(
        { ...base, annotationType: 'HPF', geometry: { type: 'Point', coordinates: [50, 51] } },
        image,
      ),
    ).toBe(ANNOTATION_MESSAGES.outsideImage);
    expect(
      annotationRequestProblem(
        { ...base, annotationType: 'TEXT', geometry: { type: 'Point', coordinates: [5, 5] } },
        image,
      ),
    ).toBe(ANNOTATION_MESSAGES.textRequired);
  });
});

describe('Add annotation (doc 3 §4)', () => {
  it('is enabled for freehand, line, ellipse or HPF in editing, or text in editing with text', () => {
    expect(canAddAnnotation('hpf', 'EDITING', '')).toBe(true);
    expect(canAddAnnotation('hpf', 'PLACING', '')).toBe(false);
    expect(canAddAnnotation('text', 'EDITING', ' ')).toBe(false);
    expect(canAddAnnotation('text', 'EDITING', 'x')).toBe(true);
    expect(canAddAnnotation('point', 'EDITING', '')).toBe(false);
  });
});

describe('colours for QuPath', () => {
  it('converts #RRGGBB and [r, g, b] both ways', () => {
    expect(hexToRgb('#FF001E')).toEqual([255, 0, 30]);
    expect(hexToRgb('#0f0')).toEqual([0, 255, 0]);
    expect(hexToRgb('red')).toBeNull();
    expect(rgbToHex([255, 0, 30])).toBe('#FF001E');
  });
});

describe('parentFinder', () => {
  it('answers as parentHpfOf for any HPFs and points', () => {
    const position = fc.tuple(fc.integer({ min: 0, max: 2000 }), fc.integer({ min: 0, max: 2000 }));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(position, fc.integer({ min: 1, max: 400 })), { maxLength: 40 }),
        fc.array(position, { maxLength: 60 }),
        (circles, points) => {
          const hpfs = circles.map(([centre, radius], i) => ({ id: i + 1, centre, radius }));
          const find = parentFinder(hpfs);
          for (const p of points) expect(find(p)).toBe(parentHpfOf(p, hpfs));
        },
      ),
    );
  });
});
