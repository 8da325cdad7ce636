import fc from 'fast-check';
import type { MldLayerSpec, MldObjectSpec, MldSectionSpec, MldShapeSpec } from './mldWriter.js';

/**
 * Arbitrary `.mld` file specs (fast-check) for the parser's round trip and fuzz tests, written by
 * mldWriter.ts's writeMld. Kept apart from the writer so that its other users (the end-to-end
 * tests, the benchmark) do not load fast-check.
 */

const coordinate = fc.double({ min: -100, max: 100, noNaN: true });
const float32 = fc.float({ min: -100, max: 100, noNaN: true, noDefaultInfinity: true });
const length = fc.double({ min: 0, max: 10, noNaN: true });
const text = fc.string({ maxLength: 12, unit: fc.integer({ min: 1, max: 255 }).map((c) => String.fromCharCode(c)) });
const points = (min: number) =>
  fc.array(fc.tuple(float32, float32), { minLength: min, maxLength: 12 }).map((ps) => ps.flat());

const shapeArbitrary: fc.Arbitrary<MldShapeSpec> = fc.oneof(
  fc.record({
    kind: fc.constant('polygon' as const),
    shapeId: fc.constantFrom(0 as const, 8 as const),
    points: points(0),
  }),
  fc.record({ kind: fc.constant('polyline' as const), points: points(0) }),
  fc.record({
    kind: fc.constant('line' as const),
    points: points(2).map((p) => p.slice(0, 4)),
    encoding: fc.constant('float32' as const),
  }),
  fc.record({ kind: fc.constant('circle' as const), x: coordinate, y: coordinate, radius: length }),
  fc.record({
    kind: fc.constant('ellipse' as const),
    x: coordinate,
    y: coordinate,
    major: length,
    minor: length,
    angle: coordinate,
  }),
  fc.record({
    kind: fc.constant('rectangle' as const),
    x: coordinate,
    y: coordinate,
    halfWidth: length,
    halfHeight: length,
    angle: coordinate,
  }),
  fc.record({ kind: fc.constant('square' as const), x: coordinate, y: coordinate, size: length, angle: coordinate }),
  fc.record({ kind: fc.constant('text' as const), x: coordinate, y: coordinate }),
);

const objectArbitrary: fc.Arbitrary<MldObjectSpec> = fc.record({
  classIndex: fc.integer({ min: 0, max: 255 }),
  shape: shapeArbitrary,
  text,
  additional: text,
});

/** Objects and a split of them into chunks (possibly empty ones). */
const layerArbitrary: fc.Arbitrary<MldLayerSpec> = fc
  .record({
    name: fc.string({
      maxLength: 20,
      unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 _-'.split('')),
    }),
    inImageCoordinates: fc.boolean(),
    objects: fc.array(objectArbitrary, { maxLength: 8 }),
    cuts: fc.array(fc.nat(8), { maxLength: 3 }),
  })
  .map(({ cuts, objects, ...rest }) => {
    if (objects.length === 0) return { ...rest, objects };
    const ends = [...cuts.map((c) => c % (objects.length + 1)).sort((a, b) => a - b), objects.length];
    const chunks = ends.map((end, i) => end - (i === 0 ? 0 : (ends[i - 1] ?? 0)));
    // Reading stops at the last object: an empty chunk after it is not part of the file.
    while (chunks.length > 1 && chunks[chunks.length - 1] === 0) chunks.pop();
    return { ...rest, objects, chunks };
  });

const imageInfoArbitrary: fc.Arbitrary<MldSectionSpec> = fc
  .record({
    imagePath: fc.option(fc.string({ maxLength: 30 }), { nil: undefined }),
    width: fc.integer({ min: 1, max: 200_000 }),
    height: fc.integer({ min: 1, max: 200_000 }),
    left: coordinate,
    top: coordinate,
    fovWidth: fc.double({ min: 1e-3, max: 100, noNaN: true }),
    fovHeight: fc.double({ min: 1e-3, max: 100, noNaN: true }),
  })
  .map(({ imagePath, width, height, left, top, fovWidth, fovHeight }) => ({
    tag: '[ImageInfo]' as const,
    ...(imagePath !== undefined ? { imagePath } : {}),
    size: { width, height },
    // + 0: the XML writes -0 as 0.
    fieldOfView: { left: left + 0, top: top + 0, right: left + fovWidth, bottom: top - fovHeight },
  }));

const layerConfigsArbitrary: fc.Arbitrary<MldSectionSpec> = fc
  .array(
    fc.record({
      layer: fc.string({ maxLength: 12 }),
      classes: fc.uniqueArray(
        fc.record({
          index: fc.integer({ min: 0, max: 255 }),
          name: fc.string({ maxLength: 12 }),
          color: fc.integer({ min: 0, max: 0xffffff }),
        }),
        { selector: (c) => c.index, maxLength: 6 },
      ),
    }),
    { maxLength: 3 },
  )
  .map((layers) => ({
    tag: '[LayerConfigs]' as const,
    layers: layers.filter((l, i) => layers.findIndex((m) => m.layer === l.layer) === i),
  }));

const layerImageArbitrary: fc.Arbitrary<MldSectionSpec> = fc.record({
  tag: fc.constant('[LayerImage]' as const),
  name: fc.string({ minLength: 1, maxLength: 10, unit: fc.constantFrom(...'abc XYZ019'.split('')) }),
  bytes: fc.uint8Array({ maxLength: 40 }),
});

/**
 * Arbitrary well-formed files (fast-check): up to 4 layers of up to 8 objects of every shape, split
 * into chunks; optional [ImageInfo] and [LayerConfigs], heatmaps and a [LayerAtlas], in any order;
 * with or without the end marker. Lines are float32 (a float64 line is tested on its own).
 */
export const mldSpecArbitrary = fc
  .record({
    layers: fc.array(layerArbitrary, { maxLength: 4 }),
    info: fc.option(imageInfoArbitrary, { nil: undefined }),
    configs: fc.option(layerConfigsArbitrary, { nil: undefined }),
    heatmaps: fc.array(layerImageArbitrary, { maxLength: 2 }),
    atlas: fc.boolean(),
    order: fc.func(fc.integer()),
    trailer: fc.constantFrom('LDFF 4.0', null),
  })
  .map(({ layers, info, configs, heatmaps, atlas, order, trailer }) => {
    const sections: MldSectionSpec[] = [...heatmaps];
    if (info) sections.push(info);
    if (configs) sections.push(configs);
    if (atlas) sections.push({ tag: '[LayerAtlas]', body: '<LayerAtlas/>', raw: true });
    const keyed = sections.map((section, i) => ({ section, key: order(i) }));
    keyed.sort((a, b) => a.key - b.key);
    return { layers, sections: keyed.map((k) => k.section), trailer };
  });
