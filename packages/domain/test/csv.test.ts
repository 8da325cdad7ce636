import { describe, expect, it } from 'vitest';
import { csvField, csvLine } from '../src/csv.js';

/**
 * CSV injection (issue 26 item 14): a text cell that a spreadsheet could read as a formula or a DDE
 * call gets an apostrophe in front, in every export (they all write through csvField). The ASCII
 * starters (=, +, -, @, tab, carriage return) were neutralised; their fullwidth forms (＝ ＋ － ＠,
 * which East Asian spreadsheet locales read as the ASCII ones) and the pipe (| and ｜) were not.
 */
describe('csvField neutralises formula starters', () => {
  it.each([
    ['=1+1', `'=1+1`],
    ['+1', `'+1`],
    ['-1', `'-1`],
    ['@SUM(A1)', `'@SUM(A1)`],
    ['\tx', `'\tx`],
    ['\rx', `"'\rx"`],
    ['\uFF1DHYPERLINK("http://x")', `"'\uFF1DHYPERLINK(""http://x"")"`],
    ['＝1+1', `'＝1+1`],
    ['＋1', `'＋1`],
    ['－1', `'－1`],
    ['＠SUM(A1)', `'＠SUM(A1)`],
    ["|cmd '/C calc'!A0", `'|cmd '/C calc'!A0`],
    ['｜cmd', `'｜cmd`],
  ])('%j → %j', (value, expected) => {
    expect(csvField(value)).toBe(expected);
  });

  it('leaves other text, numbers and booleans as they are', () => {
    expect(csvField('a=b')).toBe('a=b');
    expect(csvField('x|y')).toBe('x|y');
    expect(csvField('Ｘ＝1')).toBe('Ｘ＝1');
    expect(csvField(' =1')).toBe(' =1');
    expect(csvField(-5)).toBe('-5');
    expect(csvField(true)).toBe('Yes');
    expect(csvField(null)).toBe('');
    expect(csvLine(['＝1', '|2', 3])).toBe(`'＝1,'|2,3\r\n`);
  });
});
