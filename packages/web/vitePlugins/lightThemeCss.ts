import type { Container, Plugin, Rule } from 'postcss';

/** A selector that applies under Blueprint's dark theme (an ancestor with the class, or the element itself). */
const DARK_THEME = /\.bp6-dark(?![\w-])/;
/** A glyph of Blueprint's icon font: `.bp6-icon-caret-up::before { content: "\f143" }`. */
const ICON_FONT_GLYPH = /^\.bp6-icon-[a-z0-9-]+::?before$/;

/** Whether `selector` applies only under the dark theme: the class outside any `:not(…)`, `:is(…)`. */
function isDarkOnly(selector: string): boolean {
  let outside = selector;
  for (let inner = ''; inner !== outside;) [inner, outside] = [outside, outside.replace(/\([^()]*\)/g, '')];
  return DARK_THEME.test(outside);
}

const isIconFontGlyph = (rule: Rule): boolean =>
  rule.selectors.every((selector) => ICON_FONT_GLYPH.test(selector)) &&
  (rule.nodes ?? []).every((node) => node.type === 'decl' && node.prop === 'content');

/** Removes `rule`, then each parent (an @media, an @supports) that it leaves empty. */
function removeRule(rule: Rule): void {
  let node = rule.parent as Container | undefined;
  rule.remove();
  while (node && node.type !== 'root' && (node.nodes ?? []).length === 0) {
    const parent: Container | undefined = node.parent as Container | undefined;
    node.remove();
    node = parent;
  }
}

/**
 * The styles the app can use, out of Blueprint's whole stylesheet (issue 28): the browser parses
 * every rule of the page's stylesheet before its first frame and matches the rules against every
 * element after, so the rules that can never apply cost each open. Of Blueprint's blueprint.css
 * (0.56 MB, most of the shell's style) these take 0.2 MB; the shell's stylesheet goes from 476 to
 * 336 kB.
 * - **Dark theme**: the app is light only (no element has Blueprint's `bp6-dark` class; Blueprint
 *   adds it only under an ancestor that has it). Every selector naming the class goes, and a rule
 *   left with none (and an at-rule left empty) with it.
 * - **Icon font glyphs**: the app draws Blueprint's icons as SVG (its Icon component) and loads no
 *   icon font, so the 1 400 `.bp6-icon-<name>::before { content: … }` rules of that font never
 *   draw anything but a missing glyph.
 * A dark theme, or the icon font, later would remove this plugin (vite.config.ts).
 */
export function lightThemeCss(): Plugin {
  return {
    postcssPlugin: 'lamina-light-theme',
    Rule(rule) {
      // A font glyph or a dark-only rule goes (keyframe steps, `0%` or `to`, are neither).
      if (isIconFontGlyph(rule)) {
        removeRule(rule);
        return;
      }
      if (!DARK_THEME.test(rule.selector)) return;
      const kept = rule.selectors.filter((selector) => !isDarkOnly(selector));
      if (kept.length === rule.selectors.length) return;
      if (kept.length > 0) {
        rule.selectors = kept;
        return;
      }
      removeRule(rule);
    },
  };
}
