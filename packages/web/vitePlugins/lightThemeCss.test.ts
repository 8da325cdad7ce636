/// <reference types="node" />
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import postcss from 'postcss';
import { describe, expect, it } from 'vitest';
import { lightThemeCss } from './lightThemeCss';

const run = async (css: string) => (await postcss([lightThemeCss()]).process(css, { from: undefined })).css;
const compact = (css: string) => css.replace(/\s+/g, ' ').trim();

describe('lightThemeCss (issue 28)', () => {
  it("drops the dark theme's selectors, keeping a rule's others", async () => {
    const out = await run(`
      .bp6-button { color: #1c2127; }
      .bp6-dark .bp6-button { color: #f6f7f9; }
      .bp6-button:hover, .bp6-dark .bp6-button:hover, .bp6-button.bp6-dark { background: #eee; }
      .bp6-dark-ish, .bp6-darker { color: red; }
      .bp6-card:not(.bp6-dark .bp6-x) { color: blue; }
    `);
    expect(compact(out)).toBe(
      '.bp6-button { color: #1c2127; } .bp6-button:hover { background: #eee; } ' +
        '.bp6-dark-ish, .bp6-darker { color: red; } .bp6-card:not(.bp6-dark .bp6-x) { color: blue; }',
    );
  });

  it('drops the icon font glyphs, not the styles of the SVG icons', async () => {
    const out = await run(`
      .bp6-icon > svg { display: block; }
      .bp6-icon-caret-up::before { content: "\\f143"; }
      .bp6-icon-add::before, .bp6-icon-plus::before { content: "\\f1b0"; }
      .bp6-icon-large::before { content: ""; font-size: 20px; }
    `);
    expect(compact(out)).toBe(
      '.bp6-icon > svg { display: block; } .bp6-icon-large::before { content: ""; font-size: 20px; }',
    );
  });

  it('removes an at-rule it leaves empty, and leaves keyframes alone', async () => {
    const out = await run(`
      @media (min-width: 10px) { .bp6-dark .bp6-a { color: red; } }
      @media (min-width: 20px) { .bp6-a { color: red; } .bp6-dark .bp6-a { color: blue; } }
      @keyframes pt-spin { from { opacity: 0; } to { opacity: 1; } }
    `);
    expect(compact(out)).toBe(
      '@media (min-width: 20px) { .bp6-a { color: red; } } @keyframes pt-spin { from { opacity: 0; } to { opacity: 1; } }',
    );
  });

  it("keeps every light rule of Blueprint's own stylesheet and drops a third of it", async () => {
    const require = createRequire(import.meta.url);
    const blueprint = readFileSync(require.resolve('@blueprintjs/core/lib/css/blueprint.css'), 'utf8');
    const out = await run(blueprint);
    expect(out).not.toMatch(/\.bp6-dark(?![\w-])/);
    // Every selector that is neither dark nor a font glyph is still there, with its declarations.
    const lightRules = (root: postcss.Root) => {
      const rules = new Set<string>();
      root.walkRules((rule) => {
        for (const selector of rule.selectors) {
          if (/\.bp6-dark(?![\w-])/.test(selector) || /^\.bp6-icon-[a-z0-9-]+::?before$/.test(selector)) continue;
          rule.each((node) => {
            if (node.type === 'decl') rules.add(`${selector} { ${node.prop}: ${node.value} }`);
          });
        }
      });
      return rules;
    };
    const before = lightRules(postcss.parse(blueprint));
    const after = lightRules(postcss.parse(out));
    expect(before.size).toBeGreaterThan(3_000);
    expect([...before].filter((r) => !after.has(r))).toEqual([]);
    expect(out.length).toBeLessThan(blueprint.length * 0.7);
  });
});
