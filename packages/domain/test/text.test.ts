import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { asStoredText, findInvalidText, isValidText, MAX_INPUT_DEPTH, TEXT_MESSAGES } from '../src/index.js';

/** What a UTF-8 round trip (what a PostgreSQL driver sends and the server stores) makes of a string. */
const utf8RoundTrip = (s: string) => Buffer.from(s, 'utf8').toString('utf8');

describe('the text rule', () => {
  it.each([
    ['plain', 'Crohn’s disease', true],
    ['combining marks', 'e\u0301\u0302', true],
    ['astral characters', '😀 病理 𝔘', true],
    ['an empty string', '', true],
    ['NUL', 'a\u0000b', false],
    ['a lone high surrogate', '\ud800', false],
    ['a lone low surrogate', 'x\udc00', false],
    ['a reversed pair', '\udc00\ud800', false],
  ])('%s → %s', (_name, text, valid) => {
    expect(isValidText(text)).toBe(valid);
  });

  it('valid text is exactly what a UTF-8 round trip keeps; anything else is not', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (s) => {
        const survives = utf8RoundTrip(s) === s && !s.includes('\u0000');
        expect(isValidText(s)).toBe(survives);
      }),
      { numRuns: 2000 },
    );
  });

  it('asStoredText is what the database keeps (NUL aside, which it refuses)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (s) => {
        const stored = asStoredText(s);
        expect(isValidText(stored)).toBe(true);
        expect(stored).toBe(utf8RoundTrip(s).replaceAll('\u0000', '\uFFFD'));
        if (isValidText(s)) expect(stored).toBe(s);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('findInvalidText', () => {
  it('finds the first bad value or key in document order, with its path', () => {
    expect(findInvalidText({ a: 'ok', b: ['fine', 'x\u0000'], c: '\ud800' })).toEqual({
      path: 'b.1',
      message: TEXT_MESSAGES.invalidCharacters,
    });
    expect(findInvalidText({ ok: { ['k\ud800']: 1 } })).toEqual({
      path: 'ok.k\ud800',
      message: TEXT_MESSAGES.invalidCharacters,
    });
    expect(findInvalidText('\u0000')).toEqual({ path: '', message: TEXT_MESSAGES.invalidCharacters });
    expect(findInvalidText({ n: 1, b: true, z: null, s: 'é', arr: [[['😀']]] })).toBeNull();
    // Raw bodies (uploads) are not walked.
    expect(
      findInvalidText({ body: Buffer.from([0, 0xed, 0xa0, 0x80]), q: Object.assign(Object.create(null), { a: 'ok' }) }),
    ).toBeNull();
    expect(findInvalidText(Object.assign(Object.create(null), { a: '\u0000' }))).toMatchObject({ path: 'a' });
  });

  it('refuses nesting deeper than the limit without recursion', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(findInvalidText(deep)).toMatchObject({ message: TEXT_MESSAGES.tooDeep });
    let ok: unknown = 'leaf';
    for (let i = 0; i < MAX_INPUT_DEPTH; i++) ok = { k: ok };
    expect(findInvalidText(ok)).toBeNull();
  });
});
