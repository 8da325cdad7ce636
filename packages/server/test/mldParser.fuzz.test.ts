import { readFileSync } from 'node:fs';
import { randomInt } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mldSpecArbitrary } from '@lamina/test-support/mldArbitrary';
import { MLD_SAMPLE_PATH, writeMld } from '@lamina/test-support/mldWriter';
import { parseMld } from '../src/modules/mld/mldParser.js';
import { placeMld } from '../src/modules/mld/mldCoordinates.js';
import { MldParseError } from '../src/modules/mld/mldTypes.js';

/**
 * Fuzz of the .mld parser (issue 17): mutations of the real sample and of the test writer's files —
 * byte flips, truncations, inserted and deleted ranges, huge or negative counts and lengths written
 * where the layout keeps them — must either parse (and then place, or be refused) or be refused
 * with MldParseError; never another exception, never the 'internal' code (a wrapped bug), and
 * never more than MAX_MS for one input. One run with a fixed seed and one with a random seed,
 * printed so a failure can be replayed: MLD_FUZZ_SEED=<seed> MLD_FUZZ_RUNS=5000 npx vitest run
 * test/mldParser.fuzz.test.ts
 */
const RUNS = Number(process.env.MLD_FUZZ_RUNS ?? 150);
const FIXED_SEED = 20261117;
const RANDOM_SEED = Number(process.env.MLD_FUZZ_SEED ?? randomInt(2 ** 31));
const MAX_MS = 2000;
/** Vitest's limit for one property: generous per run, so a long MLD_FUZZ_RUNS run does not time out. */
const TIMEOUT_MS = 30_000 + RUNS * 60;

const sample = new Uint8Array(readFileSync(MLD_SAMPLE_PATH));

let slowest = 0;

/** The property: parse (and place) returns or throws MldParseError, quickly. */
function check(bytes: Uint8Array): void {
  const start = performance.now();
  try {
    const file = parseMld(bytes);
    try {
      placeMld(file);
    } catch (error) {
      if (!(error instanceof MldParseError)) throw error;
    }
  } catch (error) {
    if (!(error instanceof MldParseError)) throw error;
    expect(error.code, error.message).not.toBe('internal');
    expect(error.message).not.toBe('');
  } finally {
    const ms = performance.now() - start;
    slowest = Math.max(slowest, ms);
    expect(ms, `one input took ${ms.toFixed(0)} ms`).toBeLessThan(MAX_MS);
  }
}

/** Byte offsets where the sample keeps counts and lengths (MLD-FORMAT.md §3; see mldParser.test.ts). */
function structuralOffsets(bytes: Uint8Array): number[] {
  const offsets = [4, 8, 77, 81, 390, 394, 324_142 + 65];
  const file = parseMld(bytes);
  for (const layer of file.layers)
    for (const object of layer.objects.slice(0, 50)) offsets.push(object.offset, object.offset + 2);
  const text = Buffer.from(bytes).toString('latin1');
  for (const tag of ['[LayerConfigs]', '[ImageInfo]']) offsets.push(text.indexOf(tag) + tag.length + 1);
  return offsets;
}

const HOSTILE_INT32 = [0, 1, -1, 2, 3, 255, 0x7fffffff, -0x80000000, 0xffff, 0x10000, 1_000_000, 325_195, 325_196];
const HOSTILE_INT64 = [-1n, 0n, 1n, 1n << 62n, (1n << 63n) - 1n, -(1n << 63n), 325_195n, 1n << 32n];

type Mutation =
  | { kind: 'flip'; at: number; xor: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'insert'; at: number; bytes: Uint8Array }
  | { kind: 'delete'; at: number; length: number }
  | { kind: 'int32'; at: number; value: number }
  | { kind: 'int64'; at: number; value: bigint }
  | { kind: 'copy'; from: number; to: number; length: number };

/** Positions are fractions of the length, so one arbitrary fits every input. */
function mutationArbitrary(structural: number[]): fc.Arbitrary<(bytes: Uint8Array) => Mutation> {
  const position = fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true });
  const at = (bytes: Uint8Array, p: number) => Math.floor(p * bytes.length);
  const place = structural.length
    ? fc.oneof(
        position.map((p) => (b: Uint8Array) => at(b, p)),
        fc.constantFrom(...structural).map((o) => () => o),
      )
    : position.map((p) => (b: Uint8Array) => at(b, p));
  return fc.oneof(
    fc
      .tuple(place, fc.integer({ min: 1, max: 255 }))
      .map(([where, xor]) => (b: Uint8Array) => ({ kind: 'flip' as const, at: where(b), xor })),
    position.map((p) => (b: Uint8Array) => ({ kind: 'truncate' as const, at: at(b, p) })),
    fc
      .tuple(place, fc.uint8Array({ minLength: 1, maxLength: 64 }))
      .map(([where, bytes]) => (b: Uint8Array) => ({ kind: 'insert' as const, at: where(b), bytes })),
    fc
      .tuple(place, fc.integer({ min: 1, max: 512 }))
      .map(([where, length]) => (b: Uint8Array) => ({ kind: 'delete' as const, at: where(b), length })),
    fc
      .tuple(place, fc.oneof(fc.constantFrom(...HOSTILE_INT32), fc.integer()))
      .map(([where, value]) => (b: Uint8Array) => ({ kind: 'int32' as const, at: where(b), value })),
    fc
      .tuple(
        place,
        fc.oneof(fc.constantFrom(...HOSTILE_INT64), fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n })),
      )
      .map(([where, value]) => (b: Uint8Array) => ({ kind: 'int64' as const, at: where(b), value })),
    fc.tuple(position, position, fc.integer({ min: 1, max: 4096 })).map(([from, to, length]) => (b: Uint8Array) => ({
      kind: 'copy' as const,
      from: at(b, from),
      to: at(b, to),
      length,
    })),
  );
}

function mutate(bytes: Uint8Array, m: Mutation): Uint8Array {
  const out = Uint8Array.from(bytes);
  const view = new DataView(out.buffer);
  switch (m.kind) {
    case 'flip':
      if (m.at < out.length) out[m.at]! ^= m.xor;
      return out;
    case 'truncate':
      return out.subarray(0, m.at);
    case 'insert':
      return concat(out.subarray(0, m.at), m.bytes, out.subarray(m.at));
    case 'delete':
      return concat(out.subarray(0, m.at), out.subarray(m.at + m.length));
    case 'int32':
      if (m.at + 4 <= out.length) view.setUint32(m.at, m.value >>> 0, true);
      return out;
    case 'int64':
      if (m.at + 8 <= out.length) view.setBigInt64(m.at, m.value, true);
      return out;
    case 'copy': {
      const piece = bytes.slice(m.from, m.from + m.length);
      out.set(piece.subarray(0, Math.max(0, out.length - m.to)), m.to);
      return out;
    }
  }
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function applyAll(bytes: Uint8Array, mutations: ((b: Uint8Array) => Mutation)[]): Uint8Array {
  let out = bytes;
  for (const make of mutations) out = mutate(out, make(out));
  return out;
}

describe('mldParser fuzz', () => {
  const sampleMutations = fc.array(mutationArbitrary(structuralOffsets(sample)), { minLength: 1, maxLength: 4 });
  const writerMutations = fc.array(mutationArbitrary([]), { minLength: 1, maxLength: 4 });

  for (const [label, seed] of [
    ['fixed seed', FIXED_SEED],
    ['random seed', RANDOM_SEED],
  ] as const) {
    it(
      `mutations of the real sample (${label} ${seed})`,
      () => {
        fc.assert(
          fc.property(sampleMutations, (mutations) => check(applyAll(sample, mutations))),
          { seed, numRuns: RUNS },
        );
      },
      TIMEOUT_MS,
    );

    it(
      `mutations of the test writer's files (${label} ${seed})`,
      () => {
        fc.assert(
          fc.property(mldSpecArbitrary, writerMutations, (spec, mutations) => {
            const bytes = writeMld(spec);
            check(bytes);
            check(applyAll(bytes, mutations));
          }),
          { seed, numRuns: RUNS * 2 },
        );
      },
      TIMEOUT_MS,
    );
  }

  it('every truncation of the sample near its structure either fails or parses without the end marker', () => {
    const cuts = new Set<number>();
    for (let i = 0; i < 1200; i++) cuts.add(i);
    for (let i = sample.length - 1200; i < sample.length; i++) cuts.add(i);
    for (let i = 0; i < sample.length; i += 997) cuts.add(i);
    for (const cut of cuts) {
      const bytes = sample.subarray(0, cut);
      let trailer: string | null;
      try {
        trailer = parseMld(bytes).trailer;
      } catch (error) {
        if (!(error instanceof MldParseError) || error.code === 'internal') throw error;
        continue;
      }
      // Only a cut between two trailing sections leaves a readable file, and never with the marker.
      expect(trailer, `cut at ${cut}`).toBeNull();
    }
  });

  it('counts claiming the whole address space are refused at once, not allocated', () => {
    for (const at of structuralOffsets(sample))
      for (const value of [0x7fffffff, -1, 0x40000000]) {
        const bytes = Uint8Array.from(sample);
        if (at + 4 > bytes.length) continue;
        new DataView(bytes.buffer).setInt32(at, value, true);
        check(bytes);
      }
    console.log(`slowest input: ${slowest.toFixed(1)} ms`);
  });
});
