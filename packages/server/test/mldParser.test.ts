import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mldSpecArbitrary } from '@lamina/test-support/mldArbitrary';
import {
  MLD_SAMPLE_PATH,
  writeMld,
  writePixelMld,
  type MldLayerSpec,
  type MldObjectSpec,
  type MldSectionSpec,
  type MldShapeSpec,
} from '@lamina/test-support/mldWriter';
import { colorRefToHex, imageNameOf, parseMld } from '../src/modules/mld/mldParser.js';
import { checkImageSize, pixelTransform, placeMld } from '../src/modules/mld/mldCoordinates.js';
import { MLD_MESSAGES, MldParseError, type MldErrorCode, type MldFile } from '../src/modules/mld/mldTypes.js';

/**
 * The .mld parser (issue 17): the real sample, every documented quirk on files made by the test
 * writer, the error messages, the round trip, and the speed. The fuzz test is mldParser.fuzz.test.ts.
 */

const sample = readFileSync(MLD_SAMPLE_PATH);

function parseError(run: () => unknown): MldParseError {
  try {
    run();
  } catch (error) {
    if (error instanceof MldParseError) return error;
    throw error;
  }
  throw new Error('expected an MldParseError');
}

function expectRefused(bytes: Uint8Array, code: MldErrorCode, message: RegExp | string): MldParseError {
  const error = parseError(() => parseMld(bytes));
  expect(error.code).toBe(code);
  if (typeof message === 'string') expect(error.message).toBe(message);
  else expect(error.message).toMatch(message);
  return error;
}

const IMAGE_INFO: MldSectionSpec = {
  tag: '[ImageInfo]',
  imagePath: 'C:\\slides\\slide-1.svs',
  size: { width: 4000, height: 3000 },
  fieldOfView: { left: -0.5, right: 0.5, top: 0.375, bottom: -0.375 },
};

const layer = (name: string, objects: MldObjectSpec[], extra: Partial<MldLayerSpec> = {}): MldLayerSpec => ({
  name,
  objects,
  ...extra,
});
const object = (shape: MldShapeSpec, classIndex = 1, text = ''): MldObjectSpec => ({ shape, classIndex, text });
const square4 = [0, 0, 0.1, 0, 0.1, 0.1, 0, 0.1];

/** A little-endian int32 written over `bytes` at `offset` (a copy). */
function withInt32(bytes: Uint8Array, offset: number, value: number): Uint8Array {
  const copy = Uint8Array.from(bytes);
  new DataView(copy.buffer).setInt32(offset, value, true);
  return copy;
}

describe('the real sample (ses1_4_Result.mld)', () => {
  const file = parseMld(sample);

  it('has the three layers, their objects and every byte accounted for', () => {
    expect(file.version).toBe(3);
    expect(file.layers.map((l) => [l.name, l.objects.length, l.chunks, l.inImageCoordinates])).toEqual([
      ['ROI', 5, 1, false],
      ['Label', 1188, 1, false],
      ['Annotation', 0, 0, false],
    ]);
    expect(file.objectCount).toBe(1193);
    expect(file.vertexCount).toBe(39_288);
    expect(file.trailer).toBe('LDFF 4.0');
    expect(file.layerImages).toEqual([]);
    expect(file.otherSections).toEqual([]);
    expect(file.warnings).toEqual([]);
  });

  it('decodes the ROI objects (MLD-FORMAT.md §3.6)', () => {
    const roi = file.layers[0]!.objects;
    expect(roi.map((o) => [o.shape.kind, o.classIndex])).toEqual([
      ['rectangle', 0],
      ['rectangle', 1],
      ['circle', 1],
      ['polygon', 1],
      ['square', 0],
    ]);
    expect(roi[0]!.shape).toEqual({
      kind: 'rectangle',
      x: 0,
      y: 0,
      halfWidth: 3.4028234663852886e38,
      halfHeight: 3.4028234663852886e38,
      angle: 0,
    });
    expect(roi[2]!.shape).toMatchObject({ kind: 'circle', radius: expect.closeTo(0.175211, 6) });
    expect(roi[3]!.shape.kind === 'polygon' && roi[3]!.shape.points.length).toBe(16);
    expect(roi.map((o) => o.offset)).toEqual([0x55, 0x85, 0xb5, 0xd5, 0x11d]);
  });

  it('has 1,187 Nuclei polygons and one clear polygon in the Label layer, all open rings', () => {
    const label = file.layers[1]!.objects;
    const byClass = new Map<number, number>();
    for (const o of label) byClass.set(o.classIndex, (byClass.get(o.classIndex) ?? 0) + 1);
    expect(Object.fromEntries(byClass)).toEqual({ 0: 1, 2: 1187 });
    expect(label.every((o) => o.shape.kind === 'polygon' && o.shape.shapeId === 0)).toBe(true);
    expect(label.every((o) => o.text === '' && o.additional === '')).toBe(true);
  });

  it('reads the classes of [LayerConfigs] with their BGR colours as #RRGGBB', () => {
    expect(file.layerConfigs).toEqual([
      {
        layer: 'Label',
        classes: [
          { index: 1, name: 'Background', color: '#C0C0C0' },
          { index: 2, name: 'Nuclei', color: '#00FF00' },
          { index: 3, name: 'Boundary', color: '#808080' },
          { index: 4, name: 'Positive', color: '#FF0000' },
          { index: 5, name: 'Negative', color: '#0000FF' },
          { index: 6, name: '1+', color: '#FFFF00' },
          { index: 7, name: '2+', color: '#FF8000' },
          { index: 8, name: '3+', color: '#FF0000' },
          { index: 9, name: 'Separator', color: null },
        ],
      },
    ]);
  });

  it('reads [ImageInfo]: the image path and its name, the size, the field of view', () => {
    expect(file.imageInfo).toEqual({
      imagePath: '\\\\10.161.1.7\\f\\Data\\Test_NDPI\\OS-2.ndpi',
      imageName: 'OS-2',
      size: { width: 126_976, height: 73_728 },
      fieldOfView: { left: -0.85588100000000011, top: 10.3416, right: 27.980019, bottom: -6.402206 },
    });
  });

  it('puts ≥ 99.9 % of polygon vertices on integer pixel corners (MLD-FORMAT.md §1: 99.98 %)', () => {
    const t = pixelTransform(file.imageInfo);
    expect(t.pixelsPerMmX).toBeCloseTo(4403.4, 1); // 0.2271 µm/px, a 40× NDPI
    let total = 0;
    let onCorner = 0;
    for (const l of file.layers)
      for (const o of l.objects) {
        if (o.shape.kind !== 'polygon') continue;
        const p = o.shape.points;
        for (let i = 0; i < p.length; i += 2) {
          const x = t.x(p[i]!);
          const y = t.y(p[i + 1]!);
          total++;
          // float32 millimetres carry ~0.008 px of noise here; the sample's worst is 0.0021 px.
          if (Math.abs(x - Math.round(x)) < 0.005 && Math.abs(y - Math.round(y)) < 0.005) onCorner++;
          expect(x >= 0 && x <= t.size.width && y >= 0 && y <= t.size.height).toBe(true);
        }
      }
    expect(total).toBe(39_288);
    // The Label layer's 39,280 vertices all land on corners; only the hand-drawn ROI polygon's 8 do not.
    expect(onCorner).toBe(39_280);
    expect(onCorner / total).toBeGreaterThanOrEqual(0.999);
  });

  it('places the objects on the image: corners become whole pixels, the background rectangle is left out', () => {
    const placement = placeMld(file);
    const [roi, label, annotation] = placement.layers;
    expect(roi!.skipped).toEqual({ clearAll: 1, degenerate: 0, outOfRange: 0 });
    expect(roi!.objects.map((o) => [o.kind, o.geometry.type])).toEqual([
      ['rectangle', 'Polygon'],
      ['circle', 'Point'],
      ['polygon', 'Polygon'],
      ['square', 'Polygon'],
    ]);
    const circle = roi!.objects[1]!;
    expect(circle.radius).toBeCloseTo(0.175211 * 4403.4, 0);
    expect(circle.className).toBeNull(); // the sample configures only the Label layer
    expect(label!.objects).toHaveLength(1188);
    const nuclei = label!.objects.filter((o) => o.className === 'Nuclei');
    expect(nuclei).toHaveLength(1187);
    expect(nuclei.every((o) => o.color === '#00FF00' && o.insideImage)).toBe(true);
    let vertices = 0;
    for (const o of label!.objects) {
      if (o.geometry.type !== 'Polygon') throw new Error('not a polygon');
      const ring = o.geometry.coordinates[0]!;
      expect(ring[0]).toEqual(ring[ring.length - 1]); // closed for GeoJSON
      for (const [x, y] of ring) {
        vertices++;
        expect(Number.isInteger(x) && Number.isInteger(y)).toBe(true);
      }
    }
    expect(vertices).toBe(39_280 + 1188);
    expect(annotation!.objects).toEqual([]);
    expect(placement.objectCount).toBe(4 + 1188);
  });

  it('checks its size against the linked image, with the exact message', () => {
    expect(() => checkImageSize(file.imageInfo, { width: 126_976, height: 73_728 })).not.toThrow();
    const error = parseError(() => checkImageSize(file.imageInfo, { width: 2220, height: 2967 }));
    expect(error.code).toBe('sizeMismatch');
    expect(error.message).toBe('Image size 126976×73728 in the file does not match the image (2220×2967)');
    expect(error.message).toContain('\u00d7');
  });

  it('parses in a few milliseconds', () => {
    parseMld(sample);
    const runs = 20;
    const start = performance.now();
    for (let i = 0; i < runs; i++) parseMld(sample);
    const ms = (performance.now() - start) / runs;
    console.log(`sample parse: ${ms.toFixed(2)} ms`);
    expect(ms).toBeLessThan(200);
  });

  it('names the section and the byte offset when a count is corrupt', () => {
    // The vertex count of the Label layer's first object (at 0x18e + 2) made huge.
    const error = expectRefused(
      withInt32(sample, 0x190, 0x7fffffff),
      'truncated',
      /^Invalid \.mld file: 2147483647 vertices and the two text terminators need \d+ bytes but the chunk has 323738 left \(layer 2 \(Label\), chunk 1, object 1, at byte 400\)$/,
    );
    expect(error.section).toBe('layer 2 (Label), chunk 1, object 1');
    expect(error.offset).toBe(400);
    expectRefused(
      withInt32(sample, 0x186, -1),
      'invalid',
      /a negative object count \(-1\) \(layer 2 \(Label\), at byte 390\)/,
    );
    expectRefused(
      withInt32(sample, 0x18a, 323_743),
      'truncated',
      'Invalid .mld file: 12 vertices and the two text terminators need 98 bytes but the chunk has 97 left (layer 2 (Label), chunk 1, object 1188, at byte 324040)',
    );
    expectRefused(
      withInt32(sample, 0x18a, 323_745),
      'invalid',
      /^Invalid \.mld file: 1 bytes left in the chunk after the layer's 1188 objects \(layer 2 \(Label\), chunk 1, at byte 324142\)$/,
    );
  });
});

describe('quirks, on files from the test writer', () => {
  it('reads polygons as float32 runs and the other shapes as float64', () => {
    const file = parseMld(
      writeMld({
        layers: [
          layer('ROI', [
            object({ kind: 'polygon', points: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6] }),
            object({ kind: 'circle', x: 0.1, y: 0.2, radius: 0.3 }),
          ]),
        ],
      }),
    );
    const [polygon, circle] = file.layers[0]!.objects;
    expect(Array.from(polygon!.shape.kind === 'polygon' ? polygon!.shape.points : [])).toEqual(
      [0.1, 0.2, 0.3, 0.4, 0.5, 0.6].map(Math.fround),
    );
    expect(circle!.shape).toEqual({ kind: 'circle', x: 0.1, y: 0.2, radius: 0.3 });
  });

  it('reads objects split over several chunks (reader C), empty chunks included', () => {
    const objects = [1, 2, 3, 4, 5].map((i) => object({ kind: 'text', x: i, y: -i }, i, `#${i}`));
    const file = parseMld(writeMld({ layers: [layer('Label', objects, { chunks: [2, 0, 3] })] }));
    expect(file.layers[0]!.chunks).toBe(3);
    expect(file.layers[0]!.objects.map((o) => [o.classIndex, o.text])).toEqual(
      objects.map((o) => [o.classIndex, o.text]),
    );
  });

  it('refuses a chunk that ends inside an object, and objects missing after the last chunk', () => {
    const bytes = writeMld({
      layers: [layer('ROI', [object({ kind: 'circle', x: 0, y: 0, radius: 1 })])],
      trailer: null,
    });
    // The chunk size (after the 12-byte header and the 69-byte layer header) one byte short.
    expectRefused(
      withInt32(bytes, 81, 31),
      'truncated',
      /the object additional text has no terminating NUL before the end of the chunk \(layer 1 \(ROI\), chunk 1, object 1, at byte 116\)/,
    );
    // Two objects announced, one written: the second chunk header is missing.
    const short = writeMld({
      layers: [layer('ROI', [object({ kind: 'circle', x: 0, y: 0, radius: 1 })], { announcedCount: 2 })],
      trailer: null,
    });
    expectRefused(
      short,
      'truncated',
      /the chunk size needs 4 bytes but the file has 0 left \(layer 1 \(ROI\), chunk 2, at byte 117\)/,
    );
  });

  it('without [ImageInfo]: parses, and placing it fails with the field-of-view message', () => {
    const file = parseMld(writeMld({ layers: [layer('ROI', [object({ kind: 'circle', x: 0, y: 0, radius: 1 })])] }));
    expect(file.imageInfo).toBeNull();
    for (const run of [
      () => pixelTransform(file.imageInfo),
      () => placeMld(file),
      () => checkImageSize(null, { width: 1, height: 1 }),
    ]) {
      const error = parseError(run);
      expect(error.code).toBe('noFieldOfView');
      expect(error.message).toBe(
        'The .mld file has no [ImageInfo]: without the field of view its coordinates cannot be placed on the image',
      );
    }
  });

  it('an [ImageInfo] without <FOV> or <Size> cannot place coordinates either', () => {
    const noFov = parseMld(
      writeMld({ sections: [{ tag: '[ImageInfo]', imagePath: 'a.svs', size: { width: 10, height: 10 } }] }),
    );
    expect(noFov.imageInfo).toEqual({
      imagePath: 'a.svs',
      imageName: 'a',
      size: { width: 10, height: 10 },
      fieldOfView: null,
    });
    const error = parseError(() => pixelTransform(noFov.imageInfo));
    expect(error.code).toBe('noFieldOfView');
    expect(error.message).toBe(
      "The .mld file's [ImageInfo] has no <FOV>: without the field of view its coordinates cannot be placed on the image",
    );
    const noSize = parseMld(
      writeMld({
        sections: [
          {
            tag: '[ImageInfo]',
            fieldOfView:
              IMAGE_INFO.tag === '[ImageInfo]' ? IMAGE_INFO.fieldOfView! : { left: 0, right: 1, top: 1, bottom: 0 },
          },
        ],
      }),
    );
    expect(parseError(() => checkImageSize(noSize.imageInfo, { width: 1, height: 1 })).message).toMatch(
      /has no <Size>/,
    );
  });

  it('refuses a malformed [ImageInfo]', () => {
    const info = (body: string) => writeMld({ sections: [{ tag: '[ImageInfo]', body, raw: true }] });
    expectRefused(
      info('<ImageInfo><FOV><Left>0</Left><Top>1</Top><Right>0</Right><Bottom>0</Bottom></FOV></ImageInfo>'),
      'invalid',
      /the <FOV> is empty/,
    );
    expectRefused(
      info('<ImageInfo><FOV><Left>x</Left></FOV></ImageInfo>'),
      'invalid',
      /<FOV><Left> 'x' is not a number \(section \[ImageInfo\], at byte 239\)/,
    );
    expectRefused(
      info('<ImageInfo><Size><X>0</X><Y>5</Y></Size></ImageInfo>'),
      'invalid',
      /<Size><X> '0' is not a whole number/,
    );
    expectRefused(
      info('<ImageInfo><Size><X>12</X></Size>'),
      'invalid',
      /malformed XML: element <ImageInfo> is not closed/,
    );
    expectRefused(info('<!DOCTYPE x [<!ENTITY a "b">]><ImageInfo/>'), 'invalid', /DOCTYPE/);
    expectRefused(info('<Other/>'), 'invalid', /the root element is <Other>, not <ImageInfo>/);
    expectRefused(writeMld({ sections: [IMAGE_INFO, IMAGE_INFO] }), 'invalid', /a second \[ImageInfo\] section/);
    const notUtf8 = writeMld({
      sections: [{ tag: '[ImageInfo]', body: new Uint8Array([0x3c, 0xff, 0x3e]), raw: true }],
    });
    expectRefused(notUtf8, 'invalid', /XML that is not valid UTF-8 \(section \[ImageInfo\], at byte 239\)/);
  });

  it('reports the byte offset of an XML error inside its section', () => {
    const bytes = writeMld({
      sections: [
        { tag: '[LayerConfigs]', body: '<LayerConfigs><Layer Name="é"><Type></Layer></LayerConfigs>', raw: true },
      ],
    });
    const start = Buffer.from(bytes).indexOf('<LayerConfigs>');
    const error = expectRefused(bytes, 'invalid', /unexpected end tag <\/Layer>/);
    // 'é' is two bytes in UTF-8: the offset counts bytes, not characters.
    expect(error.offset).toBe(start + Buffer.byteLength('<LayerConfigs><Layer Name="é"><Type>'));
  });

  it('keeps XML linear and bounded: many elements, deep nesting, many warnings', () => {
    const layers = Array.from({ length: 90_000 }, (_, i) => `<Layer Name="L${i}"/>`).join('');
    const many = writeMld({
      sections: [{ tag: '[LayerConfigs]', body: `<LayerConfigs>${layers}</LayerConfigs>`, raw: true }],
    });
    const start = performance.now();
    expect(parseMld(many).layerConfigs).toHaveLength(90_000);
    expect(performance.now() - start).toBeLessThan(2000);
    const deep = writeMld({
      sections: [{ tag: '[ImageInfo]', body: `${'<a>'.repeat(100)}${'</a>'.repeat(100)}`, raw: true }],
    });
    expectRefused(deep, 'limit', /XML with elements nested deeper than 64 \(section \[ImageInfo\], at byte 431\)/);
    const tooMany = writeMld({
      sections: [{ tag: '[LayerConfigs]', body: `<LayerConfigs>${layers}</LayerConfigs>`, raw: true }],
    });
    expect(parseError(() => parseMld(tooMany, { maxXmlElements: 1000 })).code).toBe('limit');
    const colours = Array.from({ length: 200 }, (_, i) => ({ index: i, color: 'x' }));
    const warned = parseMld(
      writeMld({ sections: [{ tag: '[LayerConfigs]', layers: [{ layer: 'A', classes: colours }] }] }),
    );
    expect(warned.warnings).toHaveLength(51);
    expect(warned.warnings[50]).toBe('… and 150 more warnings.');
  });

  it('decodes entities and CDATA in the XML; the image name comes from a Windows path', () => {
    const file = parseMld(
      writeMld({
        sections: [
          {
            tag: '[ImageInfo]',
            body: '<?xml version="1.0"?><!-- x --><ImageInfo><ImagePath><![CDATA[\\\\srv\\A&B]]>\\slide &amp; co.v1.ndpi</ImagePath><FOV><Left>-1e-1</Left><Top>+2</Top><Right>.5</Right><Bottom>-2.</Bottom></FOV><Size><X>10</X><Y>20</Y></Size></ImageInfo>',
            raw: true,
          },
        ],
      }),
    );
    expect(file.imageInfo).toEqual({
      imagePath: '\\\\srv\\A&B\\slide & co.v1.ndpi',
      imageName: 'slide & co.v1',
      size: { width: 10, height: 20 },
      fieldOfView: { left: -0.1, top: 2, right: 0.5, bottom: -2 },
    });
    expect(imageNameOf('/data/OS-2.ndpi')).toBe('OS-2');
    expect(imageNameOf('C:\\dir\\')).toBeNull();
    expect(imageNameOf('noext')).toBe('noext');
  });

  it('returns a [LayerImage] heatmap as a view on the file, undecoded', () => {
    const tiff = new Uint8Array([0x49, 0x49, 42, 0, 8, 0, 0, 0, 1, 2, 3]);
    const big = new Uint8Array([0x4d, 0x4d, 0, 43, 9, 9]);
    const other = new Uint8Array([1, 2, 3]);
    const bytes = writeMld({
      sections: [
        { tag: '[LayerImage]', name: 'Probability map', bytes: tiff },
        IMAGE_INFO,
        { tag: '[LayerImage]', name: 'Other', bytes: big },
        { tag: '[LayerImage]', name: 'Odd', bytes: other },
      ],
    });
    const file = parseMld(bytes);
    expect(file.layerImages.map((i) => [i.name, i.length, i.format, Array.from(i.bytes)])).toEqual([
      ['Probability map', 11, 'tiff', Array.from(tiff)],
      ['Other', 6, 'bigtiff', Array.from(big)],
      ['Odd', 3, 'unknown', [1, 2, 3]],
    ]);
    const first = file.layerImages[0]!;
    expect(first.bytes.buffer).toBe(bytes.buffer); // no copy
    expect(Array.from(bytes.subarray(first.offset, first.offset + first.length))).toEqual(Array.from(tiff));
    expect(file.warnings).toEqual(['The heatmap Odd does not start like a TIFF file.']);
    expect(file.imageInfo?.size).toEqual({ width: 4000, height: 3000 });
    const error = parseError(() => parseMld(bytes, { maxLayerImageBytes: 10 }));
    expect(error.code).toBe('limit');
    expect(error.message).toMatch(
      /a heatmap of 11 bytes \(more than the limit of 10\) \(section \[LayerImage\], at byte \d+\)/,
    );
  });

  it('reads a Buffer that is a view into a larger allocation (byteOffset ≠ 0)', () => {
    const padded = Buffer.concat([Buffer.alloc(7, 0xee), sample, Buffer.alloc(5, 0xee)]).subarray(7, 7 + sample.length);
    const file = parseMld(padded);
    expect(file.layers.map((l) => l.objects.length)).toEqual([5, 1188, 0]);
    expect(file.trailer).toBe('LDFF 4.0');
    const heatmap = writeMld({
      sections: [{ tag: '[LayerImage]', name: 'h', bytes: new Uint8Array([0x49, 0x49, 42, 0]) }],
    });
    const view = Buffer.concat([Buffer.alloc(3), heatmap]).subarray(3);
    const image = parseMld(view).layerImages[0]!;
    expect([image.offset, Array.from(image.bytes)]).toEqual([heatmap.length - 4 - 9, [0x49, 0x49, 42, 0]]);
  });

  it('reads the LDFF end marker; a file may end without one, but nothing may follow it', () => {
    expect(parseMld(writeMld({ trailer: 'LDFF 4.0' })).trailer).toBe('LDFF 4.0');
    const none = parseMld(writeMld({ trailer: null }));
    expect(none.trailer).toBeNull();
    expect(none.warnings).toEqual(['The file ends without an LDFF end marker.']);
    const extra = new Uint8Array([...writeMld(), 0]);
    expectRefused(extra, 'invalid', /1 bytes after the end marker LDFF 4\.0 \(section LDFF 4\.0, at byte \d+\)/);
  });

  it('reads colours as Windows COLORREF: red in the low byte', () => {
    expect(colorRefToHex('255')).toBe('#FF0000');
    expect(colorRefToHex('65280')).toBe('#00FF00');
    expect(colorRefToHex('16711680')).toBe('#0000FF');
    expect(colorRefToHex(String(0x123456))).toBe('#563412');
    expect(colorRefToHex('-1')).toBe('#FFFFFF');
    expect(colorRefToHex('#FF0000')).toBeNull();
    expect(colorRefToHex('99999999999')).toBeNull();
    const file = parseMld(
      writeMld({
        sections: [
          {
            tag: '[LayerConfigs]',
            layers: [
              {
                layer: 'ROI',
                classes: [
                  { index: 2, name: 'Tumour', color: 0x0000ff },
                  { index: 1, name: 'Tissue', color: 'red' },
                ],
              },
              { layer: 'Label', classes: [{ index: 1 }] },
            ],
          },
        ],
      }),
    );
    expect(file.layerConfigs).toEqual([
      {
        layer: 'ROI',
        classes: [
          { index: 1, name: 'Tissue', color: null },
          { index: 2, name: 'Tumour', color: '#FF0000' },
        ],
      },
      { layer: 'Label', classes: [{ index: 1, name: '', color: null }] },
    ]);
    expect(file.warnings).toEqual(["Layer ROI, class 1: the colour 'red' is not a COLORREF number."]);
  });

  it('refuses a [LayerConfigs] that maps a class twice or has no usable index', () => {
    const configs = (classes: { index: number }[]) =>
      writeMld({ sections: [{ tag: '[LayerConfigs]', layers: [{ layer: 'ROI', classes }] }] });
    expectRefused(configs([{ index: 1 }, { index: 1 }]), 'invalid', /layer ROI: class 1 given twice/);
    expectRefused(configs([{ index: 256 }]), 'invalid', /a <Type> whose Index '256' is not 0 to 255/);
    const twice = writeMld({
      sections: [
        {
          tag: '[LayerConfigs]',
          layers: [
            { layer: 'A', classes: [] },
            { layer: 'A', classes: [] },
          ],
        },
      ],
    });
    expectRefused(twice, 'invalid', /layer A configured twice/);
  });

  it('skips [LayerAtlas] and unknown bracketed sections, refuses other tags', () => {
    const file = parseMld(
      writeMld({
        sections: [
          { tag: '[LayerAtlas]', body: '<Atlas/>', raw: true },
          { tag: '[Future]', body: new Uint8Array(5), raw: true },
          IMAGE_INFO,
        ],
      }),
    );
    expect(file.otherSections.map((s) => [s.tag, s.length])).toEqual([
      ['[LayerAtlas]', 8],
      ['[Future]', 5],
    ]);
    expect(file.warnings).toEqual(['Skipped an unknown section [Future] (5 bytes).']);
    expect(file.imageInfo).not.toBeNull();
    expectRefused(
      writeMld({ sections: [{ tag: 'Junk', body: '', raw: true }] }),
      'invalid',
      /an unknown section tag 'Junk' \(section Junk, at byte 219\)/,
    );
    expectRefused(
      writeMld({ sections: [{ tag: '', body: '', raw: true }] }),
      'invalid',
      /a section tag that is empty or not printable ASCII \(trailing sections, at byte 219\)/,
    );
    const negative = writeMld({ sections: [{ tag: '[X]', body: '', raw: true }], trailer: null });
    const view = new DataView(negative.buffer);
    view.setBigInt64(negative.length - 8, -5n, true);
    expectRefused(negative, 'invalid', /the length of \[X\] is negative \(-5\)/);
    view.setBigInt64(negative.length - 8, 1n << 62n, true);
    expectRefused(negative, 'truncated', /the length of \[X\] is 4611686018427387904 bytes but the file has 0 left/);
  });

  it('reads lines as 4 × float32 (reader C), and as float64 (reader A) when float32 does not fit', () => {
    const points = [0.5, 0.25, 1.5, 2.5];
    const read = (encoding: 'float32' | 'float64') =>
      parseMld(
        writeMld({
          layers: [layer('ROI', [object({ kind: 'line', points, encoding }), object({ kind: 'text', x: 1, y: 2 })])],
        }),
      );
    const f32 = read('float32');
    expect(f32.layers[0]!.objects[0]!.shape).toEqual({
      kind: 'line',
      points: Float64Array.from(points),
      encoding: 'float32',
    });
    expect(f32.warnings).toEqual([]);
    const f64 = read('float64');
    expect(f64.layers[0]!.objects[0]!.shape).toEqual({
      kind: 'line',
      points: Float64Array.from(points),
      encoding: 'float64',
    });
    expect(f64.layers[0]!.objects[1]!.shape).toEqual({ kind: 'text', x: 1, y: 2 });
    expect(f64.warnings).toEqual(['Layer ROI: lines read as float64 (the chunk does not parse with float32 lines).']);
    expect(f64.vertexCount).toBe(2);
  });

  it('reads every shape id, 8 as a polygon variant, and 8-bit text', () => {
    const shapes: MldShapeSpec[] = [
      { kind: 'polygon', shapeId: 8, points: square4 },
      { kind: 'polyline', points: [0, 0, 0.5, 0.5] },
      { kind: 'ellipse', x: 0.1, y: 0.2, major: 0.3, minor: 0.1, angle: 0.5 },
      { kind: 'rectangle', x: 0, y: 0, halfWidth: 0.2, halfHeight: 0.1, angle: Math.PI / 2 },
      { kind: 'square', x: 0.1, y: 0.1, size: 0.05, angle: 0 },
      { kind: 'text', x: 0.2, y: 0.3 },
    ];
    const file = parseMld(
      writeMld({
        layers: [
          layer(
            'Annotation',
            shapes.map((s, i) => ({ shape: s, classIndex: i, text: 'Résumé', additional: 'x' })),
          ),
        ],
      }),
    );
    const objects = file.layers[0]!.objects;
    expect(objects.map((o) => o.shape.kind)).toEqual(['polygon', 'polyline', 'ellipse', 'rectangle', 'square', 'text']);
    expect(objects[0]!.shape).toMatchObject({ kind: 'polygon', shapeId: 8 });
    expect(objects.every((o) => o.text === 'Résumé' && o.additional === 'x')).toBe(true);
    expect(objects.map((o) => o.classIndex)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('refuses bad magic, other versions, unknown shapes, bad flags, negative and non-finite values', () => {
    const base = writeMld({ layers: [layer('ROI', [object({ kind: 'polygon', points: square4 })])], trailer: null });
    expectRefused(
      new Uint8Array([1, 2, 3]),
      'truncated',
      'Invalid .mld file: the file header needs 12 bytes but the file has 3 left (header, at byte 0)',
    );
    expectRefused(
      Buffer.from('LDFX\x03\0\0\0\x03\0\0\0'),
      'invalid',
      /does not start with LDFF \(not a Visiopharm \.mld file\) \(header, at byte 0\)/,
    );
    expectRefused(
      writeMld({ version: 4 }),
      'unsupported',
      'Invalid .mld file: version 4 (only version 3 is known) (header, at byte 4)',
    );
    expectRefused(writeMld({ announcedLayers: 100 }), 'limit', /100 layers \(more than the limit of 64\)/);
    expectRefused(
      writeMld({ announcedLayers: 4, trailer: null }),
      'truncated',
      /4 layers need at least 276 bytes but the file has 207 left/,
    );
    const shape = Uint8Array.from(base);
    shape[85] = 9;
    expectRefused(
      shape,
      'invalid',
      'Invalid .mld file: unknown shape id 9 (layer 1 (ROI), chunk 1, object 1, at byte 85)',
    );
    const flag = Uint8Array.from(base);
    flag[76] = 2;
    expectRefused(
      flag,
      'invalid',
      /the inImageCoordinates flag is 2 \(expected 0 or 1\) \(layer 1 \(ROI\), at byte 76\)/,
    );
    expectRefused(withInt32(base, 87, -3), 'invalid', /a negative vertex count \(-3\)/);
    const nan = Uint8Array.from(base);
    new DataView(nan.buffer).setFloat32(95, NaN, true);
    expectRefused(
      nan,
      'invalid',
      /a vertex coordinate that is not a finite number \(layer 1 \(ROI\), chunk 1, object 1, at byte 95\)/,
    );
    const circle = writeMld({ layers: [layer('ROI', [object({ kind: 'circle', x: 0, y: 0, radius: -1 })])] });
    expectRefused(circle, 'invalid', /a negative radius \(-1\)/);
    const inf = writeMld({ layers: [layer('ROI', [object({ kind: 'circle', x: Infinity, y: 0, radius: 1 })])] });
    expectRefused(inf, 'invalid', /a shape value that is not a finite number/);
    const huge = writeMld({ layers: [layer('ROI', [], { announcedCount: 0x7fffffff })] });
    expectRefused(huge, 'limit', /2147483647 objects \(more than the limit of 500000\)/);
  });

  it('bounds strings: object text and section tags', () => {
    const long = writeMld({ layers: [layer('ROI', [object({ kind: 'text', x: 0, y: 0 }, 1, 'x'.repeat(100))])] });
    expect(parseMld(long).layers[0]!.objects[0]!.text).toHaveLength(100);
    expect(parseError(() => parseMld(long, { maxStringBytes: 99 })).message).toMatch(
      /the object text is longer than 99 bytes/,
    );
    const tag = writeMld({ sections: [{ tag: `[${'x'.repeat(300)}]`, body: '', raw: true }] });
    expect(parseError(() => parseMld(tag)).message).toMatch(/a section tag is longer than 256 bytes/);
  });

  it('enforces the object and vertex limits', () => {
    const bytes = writeMld({
      layers: [
        layer('ROI', [object({ kind: 'polygon', points: square4 }), object({ kind: 'polygon', points: square4 })]),
        layer('Label', [object({ kind: 'line', points: [0, 0, 1, 1] })]),
      ],
    });
    expect(parseMld(bytes, { maxObjects: 3, maxVertices: 10 }).vertexCount).toBe(10);
    expect(parseError(() => parseMld(bytes, { maxObjects: 2 })).message).toMatch(
      /3 objects \(more than the limit of 2\) \(layer 2 \(Label\)/,
    );
    expect(parseError(() => parseMld(bytes, { maxVertices: 7 })).message).toMatch(
      /more than 7 vertices \(layer 1 \(ROI\), chunk 1, object 2/,
    );
  });

  it('places a layer flagged as in image coordinates nowhere: refused as unsupported', () => {
    const file = parseMld(
      writeMld({
        layers: [layer('ROI', [object({ kind: 'circle', x: 0, y: 0, radius: 1 })], { inImageCoordinates: true })],
        sections: [IMAGE_INFO],
      }),
    );
    expect(file.layers[0]!.inImageCoordinates).toBe(true);
    const error = parseError(() => placeMld(file));
    expect(error.code).toBe('unsupported');
    expect(error.message).toBe(MLD_MESSAGES.imageCoordinates('ROI'));
  });
});

describe('coordinates', () => {
  it('flips Y: the FOV top-left is pixel (0, 0), bottom-right is (width, height)', () => {
    const t = pixelTransform(parseMld(writeMld({ sections: [IMAGE_INFO] })).imageInfo);
    expect([t.x(-0.5), t.y(0.375)]).toEqual([0, 0]);
    expect([t.x(0.5), t.y(-0.375)]).toEqual([4000, 3000]);
    expect([t.x(0), t.y(0)]).toEqual([2000, 1500]);
    expect(t.length(0.25)).toBeCloseTo(1000, 9);
  });

  it('places shapes: rings closed, rectangles rotated, circles with a radius, lines, text, degenerate shapes skipped', () => {
    const size = { width: 1000, height: 800 };
    const bytes = writePixelMld({
      size,
      imagePath: 'D:\\scans\\CASE-7.svs',
      classes: [{ layer: 'ROI', names: [{ name: 'HPF', color: 0x00ff00 }] }],
      circles: [{ x: 100, y: 200, radius: 50 }],
      polygons: [
        {
          points: [
            [10, 10],
            [20, 10],
            [20, 30],
          ],
          classIndex: 2,
        },
      ],
      polylines: [
        {
          points: [
            [0, 0],
            [1000, 800],
          ],
        },
      ],
    });
    const file = parseMld(bytes);
    expect(file.imageInfo?.imageName).toBe('CASE-7');
    checkImageSize(file.imageInfo, size);
    const [roi, label, annotation] = placeMld(file).layers;
    expect(roi!.objects).toEqual([
      expect.objectContaining({
        kind: 'circle',
        className: 'HPF',
        color: '#00FF00',
        geometry: { type: 'Point', coordinates: [100, 200] },
        radius: 50,
        insideImage: true,
      }),
    ]);
    expect(label!.objects[0]).toMatchObject({
      kind: 'polygon',
      classIndex: 2,
      className: null,
      geometry: {
        type: 'Polygon',
        coordinates: [
          [
            [10, 10],
            [20, 10],
            [20, 30],
            [10, 10],
          ],
        ],
      },
    });
    expect(annotation!.objects[0]!.geometry).toEqual({
      type: 'LineString',
      coordinates: [
        [0, 0],
        [1000, 800],
      ],
    });

    // Shapes given in mm directly: FOV 1 mm × 0.75 mm over 4000 × 3000 px (4000 px/mm).
    const mm = parseMld(
      writeMld({
        layers: [
          layer('ROI', [
            object({ kind: 'rectangle', x: 0, y: 0, halfWidth: 0.01, halfHeight: 0.005, angle: Math.PI / 2 }),
            object({ kind: 'square', x: 0.1, y: 0.1, size: 0.01, angle: 0 }),
            object({ kind: 'ellipse', x: 0, y: 0, major: 0.02, minor: 0.01, angle: 0.25 }),
            object({ kind: 'text', x: 0.6, y: 0 }, 1, 'outside'),
            object({ kind: 'polygon', points: [0, 0, 0.1, 0.1] }),
            object({ kind: 'polyline', points: [0, 0] }),
            object({ kind: 'line', points: [0, 0, 0.001, 0.001] }),
            object({ kind: 'circle', x: 1e300, y: 0, radius: 1 }),
            object({ kind: 'square', x: 0, y: 0, size: 3.4e38, angle: 0 }, 0),
          ]),
        ],
        sections: [IMAGE_INFO],
      }),
    );
    const placed = placeMld(mm).layers[0]!;
    expect(placed.skipped).toEqual({ clearAll: 1, degenerate: 2, outOfRange: 1 });
    const [rectangle, square, ellipse, text, line] = placed.objects;
    // Rotated a quarter turn: 40 px wide and 20 px high becomes 20 wide and 40 high, around (2000, 1500).
    const ring = rectangle!.geometry.type === 'Polygon' ? rectangle!.geometry.coordinates[0]! : [];
    expect(ring.map(([x, y]) => [Math.round(x), Math.round(y)])).toEqual([
      [2020, 1540],
      [2020, 1460],
      [1980, 1460],
      [1980, 1540],
      [2020, 1540],
    ]);
    expect(rectangle!.rotation).toBeCloseTo(-Math.PI / 2, 12);
    expect(square!.geometry).toEqual({
      type: 'Polygon',
      coordinates: [
        [
          [2360, 1140],
          [2440, 1140],
          [2440, 1060],
          [2360, 1060],
          [2360, 1140],
        ],
      ],
    });
    expect(ellipse).toMatchObject({
      geometry: { type: 'Point', coordinates: [2000, 1500] },
      radiusX: 80,
      radiusY: 40,
      rotation: -0.25,
    });
    expect(text).toMatchObject({
      kind: 'text',
      text: 'outside',
      insideImage: false,
      geometry: { coordinates: [4400, 1500] },
    });
    expect(line).toMatchObject({
      kind: 'line',
      geometry: {
        type: 'LineString',
        coordinates: [
          [2000, 1500],
          [2004, 1496],
        ],
      },
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Round trip: writer → parser gives back the same layers, objects and shapes
// ---------------------------------------------------------------------------------------------

function expectedObject(o: MldObjectSpec) {
  const s = o.shape;
  const shape =
    s.kind === 'polygon'
      ? { kind: 'polygon', shapeId: s.shapeId ?? 0, points: Float64Array.from(s.points, Math.fround) }
      : s.kind === 'polyline'
        ? { kind: 'polyline', points: Float64Array.from(s.points, Math.fround) }
        : s.kind === 'line'
          ? { kind: 'line', points: Float64Array.from(s.points, Math.fround), encoding: 'float32' }
          : s;
  return { classIndex: o.classIndex, shape, text: o.text, additional: o.additional };
}

describe('round trip', () => {
  it('writer → parser gives back the same layers, objects, shapes and sections', () => {
    fc.assert(
      fc.property(mldSpecArbitrary, (spec) => {
        const file: MldFile = parseMld(writeMld(spec));
        expect(
          file.layers.map((l) => ({
            name: l.name,
            inImageCoordinates: l.inImageCoordinates,
            chunks: l.chunks,
            objects: l.objects.map((o) => ({
              classIndex: o.classIndex,
              shape: o.shape,
              text: o.text,
              additional: o.additional,
            })),
          })),
        ).toEqual(
          spec.layers.map((l) => ({
            name: l.name,
            inImageCoordinates: l.inImageCoordinates ?? false,
            chunks: l.objects.length === 0 ? 0 : (l.chunks?.length ?? 1),
            objects: l.objects.map(expectedObject),
          })),
        );
        const heatmaps = spec.sections.flatMap((s) => (s.tag === '[LayerImage]' && 'bytes' in s ? [s] : []));
        expect(file.layerImages.map((i) => [i.name, Array.from(i.bytes)])).toEqual(
          heatmaps.map((h) => [h.name, Array.from(h.bytes)]),
        );
        const info = spec.sections.find((s) => s.tag === '[ImageInfo]');
        if (info && 'size' in info) {
          const path = info.imagePath?.trim();
          expect(file.imageInfo).toEqual({
            imagePath: info.imagePath === undefined ? null : path,
            imageName: path ? imageNameOf(path) : null,
            size: info.size,
            fieldOfView: info.fieldOfView,
          });
        } else expect(file.imageInfo).toBeNull();
        const configs = spec.sections.find((s) => s.tag === '[LayerConfigs]');
        if (configs && 'layers' in configs)
          expect(file.layerConfigs).toEqual(
            configs.layers.map((l) => ({
              layer: l.layer,
              classes: l.classes
                .map((c) => ({ index: c.index, name: c.name?.trim(), color: colorRefToHex(String(c.color)) }))
                .sort((a, b) => a.index - b.index),
            })),
          );
        else expect(file.layerConfigs).toBeNull();
        expect(file.otherSections.map((o) => o.tag)).toEqual(
          spec.sections.filter((s) => s.tag === '[LayerAtlas]').map((s) => s.tag),
        );
        expect(file.trailer).toBe(spec.trailer);
        expect(file.objectCount).toBe(spec.layers.reduce((n, l) => n + l.objects.length, 0));
      }),
      { numRuns: 200 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Speed: linear, typed-array reads
// ---------------------------------------------------------------------------------------------

describe('speed', () => {
  it('parses and places 200,000 objects (1.6 million vertices) in well under a few seconds', () => {
    const size = { width: 100_000, height: 80_000 };
    const polygons = Array.from({ length: 200_000 }, (_, i) => {
      const x = (i % 400) * 250;
      const y = Math.floor(i / 400) * 150;
      return {
        points: [
          [x, y],
          [x + 10, y],
          [x + 20, y + 5],
          [x + 20, y + 10],
          [x + 10, y + 15],
          [x, y + 15],
          [x - 5, y + 10],
          [x - 5, y + 5],
        ] as [number, number][],
        classIndex: 1 + (i % 3),
      };
    });
    const bytes = writePixelMld({ size, imagePath: 'big.svs', polygons });
    const start = performance.now();
    const file = parseMld(bytes);
    const parsed = performance.now();
    const placement = placeMld(file);
    const placed = performance.now();
    console.log(
      `200,000 objects (${(bytes.length / 1e6).toFixed(1)} MB): parse ${(parsed - start).toFixed(0)} ms, place ${(placed - parsed).toFixed(0)} ms`,
    );
    expect(file.objectCount).toBe(200_000);
    expect(file.vertexCount).toBe(1_600_000);
    expect(placement.objectCount).toBe(200_000);
    const ring = placement.layers[1]!.objects[401]!.geometry;
    expect(ring).toEqual({
      type: 'Polygon',
      coordinates: [
        [
          [250, 150],
          [260, 150],
          [270, 155],
          [270, 160],
          [260, 165],
          [250, 165],
          [245, 160],
          [245, 155],
          [250, 150],
        ],
      ],
    });
    expect(parsed - start).toBeLessThan(3000);
    expect(placed - parsed).toBeLessThan(6000);
  });
});
