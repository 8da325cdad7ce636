import { describe, expect, it } from 'vitest';
import { appSequenceOf, formatFileSize, imageBaseName } from '../src/index.js';

describe('.mld import rules', () => {
  it('reads the APP sequence from the file name', () => {
    expect(appSequenceOf('ses1_4_Result.mld')).toBeNull();
    expect(appSequenceOf('APP12_EoE counts.mld')).toBe('12');
    expect(appSequenceOf('slide 7 app_0031 result.MLD')).toBe('0031');
    expect(appSequenceOf('0012_HPF detection.mld')).toBe('0012');
    expect(appSequenceOf('happy_12.mld')).toBeNull();
  });

  it('takes the image name from the [ImageInfo] path', () => {
    expect(imageBaseName('C:\\Images\\Study 4\\OS-2.ndpi')).toBe('OS-2');
    expect(imageBaseName('/data/slides/CMU-1-Small-Region.svs')).toBe('CMU-1-Small-Region');
    expect(imageBaseName('plain')).toBe('plain');
  });

  it('formats file sizes in 1024 steps with two decimals (doc 3 §9)', () => {
    expect(formatFileSize(0)).toBe('0.00 B');
    expect(formatFileSize(1023)).toBe('1023.00 B');
    expect(formatFileSize(1024)).toBe('1.00 kB');
    expect(formatFileSize(325_195)).toBe('317.57 kB');
    expect(formatFileSize(5 * 1024 ** 3)).toBe('5.00 GB');
  });
});
