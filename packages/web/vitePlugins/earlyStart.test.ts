import { describe, expect, it } from 'vitest';
import { inlineScript } from './earlyStart';

describe('earlyStart: the early script written inline in index.html (issue 28)', () => {
  it('takes a script that cannot end its element early', () => {
    expect(inlineScript('(function(){var a=1<2;window.x=a})();\n')).toBe('(function(){var a=1<2;window.x=a})();');
  });

  it('refuses a build holding </script or <!--, which would end or change the element', () => {
    expect(() => inlineScript('var s="</script>";')).toThrow(/cannot be inlined/);
    expect(() => inlineScript('var s="</SCRIPT ";')).toThrow(/cannot be inlined/);
    expect(() => inlineScript('var c="<!--";')).toThrow(/cannot be inlined/);
  });
});
