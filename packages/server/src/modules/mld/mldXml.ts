/**
 * A small, strict XML reader for the `.mld` file's embedded sections ([LayerConfigs], [ImageInfo]):
 * elements, attributes, text, CDATA, comments and processing instructions; the five predefined
 * entities and character references. No DOCTYPE (so no entity expansion), no namespaces. Iterative
 * (no recursion), one pass, bounded depth and element count. Problems are reported through `fail`
 * with the character index, which the caller turns into a byte offset.
 */

export interface XmlElement {
  name: string;
  attributes: Map<string, string>;
  children: XmlElement[];
  /** The element's own text (CDATA included), entities decoded, not trimmed. */
  text: string;
}

export interface XmlLimits {
  maxDepth: number;
  maxElements: number;
}

/** Reports a problem at a character index; `limit` when a limit of {@link XmlLimits} was hit. */
export type XmlFail = (detail: string, index: number, limit?: boolean) => never;

const NAME = /^[A-Za-z_:][A-Za-z0-9_:.-]*$/;
const PREDEFINED: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

function decodeEntities(raw: string, at: number, fail: XmlFail): string {
  let amp = raw.indexOf('&');
  if (amp < 0) return raw;
  let out = '';
  let from = 0;
  while (amp >= 0) {
    const semi = raw.indexOf(';', amp);
    if (semi < 0 || semi - amp > 12) fail('an unterminated entity', at + amp);
    const name = raw.slice(amp + 1, semi);
    let value: string | undefined;
    if (name.startsWith('#')) {
      const hex = name.startsWith('#x');
      const digits = name.slice(hex ? 2 : 1);
      const code = (hex ? /^[0-9a-fA-F]+$/ : /^[0-9]+$/).test(digits) ? parseInt(digits, hex ? 16 : 10) : NaN;
      const allowed =
        code === 0x9 ||
        code === 0xa ||
        code === 0xd ||
        (code >= 0x20 && code <= 0xd7ff) ||
        (code >= 0xe000 && code <= 0xfffd) ||
        (code >= 0x10000 && code <= 0x10ffff);
      if (allowed) value = String.fromCodePoint(code);
    } else {
      value = PREDEFINED[name];
    }
    if (value === undefined) fail(`an unknown entity &${name.slice(0, 12)};`, at + amp);
    out += raw.slice(from, amp) + value;
    from = semi + 1;
    amp = raw.indexOf('&', from);
  }
  return out + raw.slice(from);
}

/** Parses a document with one root element. */
export function parseXml(source: string, limits: XmlLimits, fail: XmlFail): XmlElement {
  const n = source.length;
  let i = source.charCodeAt(0) === 0xfeff ? 1 : 0;
  const stack: XmlElement[] = [];
  let root: XmlElement | null = null;
  let elements = 0;

  const skipTo = (end: string, from: number, what: string): number => {
    const at = source.indexOf(end, from);
    if (at < 0) fail(`an unterminated ${what}`, from);
    return at + end.length;
  };

  while (i < n) {
    const lt = source.indexOf('<', i);
    const textEnd = lt < 0 ? n : lt;
    if (textEnd > i) {
      const raw = source.slice(i, textEnd);
      const top = stack[stack.length - 1];
      if (top) top.text += decodeEntities(raw, i, fail);
      else if (raw.trim() !== '') fail('text outside the root element', i);
    }
    if (lt < 0) break;
    i = lt;
    if (source.startsWith('<?', i)) {
      i = skipTo('?>', i + 2, 'processing instruction');
    } else if (source.startsWith('<!--', i)) {
      i = skipTo('-->', i + 4, 'comment');
    } else if (source.startsWith('<![CDATA[', i)) {
      const end = skipTo(']]>', i + 9, 'CDATA section');
      const top = stack[stack.length - 1];
      if (!top) fail('CDATA outside the root element', i);
      top.text += source.slice(i + 9, end - 3);
      i = end;
    } else if (source.startsWith('<!', i)) {
      fail('a DOCTYPE or declaration (not allowed)', i);
    } else if (source.startsWith('</', i)) {
      const gt = source.indexOf('>', i);
      if (gt < 0) fail('an unterminated end tag', i);
      const name = source.slice(i + 2, gt).trim();
      const top = stack.pop();
      if (!top || top.name !== name) fail(`an unexpected end tag </${name.slice(0, 40)}>`, i);
      i = gt + 1;
    } else {
      // A start tag: name, attributes, then '>' or '/>'.
      let j = i + 1;
      while (j < n && !isSpace(source.charCodeAt(j)) && source[j] !== '>' && source[j] !== '/') j++;
      const name = source.slice(i + 1, j);
      if (!NAME.test(name)) fail(`an invalid element name '${name.slice(0, 40)}'`, i);
      if (root && stack.length === 0) fail('a second root element', i);
      if (++elements > limits.maxElements) fail(`more than ${limits.maxElements} elements`, i, true);
      if (stack.length >= limits.maxDepth) fail(`elements nested deeper than ${limits.maxDepth}`, i, true);
      const element: XmlElement = { name, attributes: new Map(), children: [], text: '' };
      let selfClosing = false;
      for (;;) {
        while (j < n && isSpace(source.charCodeAt(j))) j++;
        if (j >= n) fail('an unterminated start tag', i);
        if (source[j] === '>') {
          j++;
          break;
        }
        if (source.startsWith('/>', j)) {
          j += 2;
          selfClosing = true;
          break;
        }
        const nameStart = j;
        while (j < n && !isSpace(source.charCodeAt(j)) && source[j] !== '=' && source[j] !== '>' && source[j] !== '/')
          j++;
        const attribute = source.slice(nameStart, j);
        if (!NAME.test(attribute)) fail(`an invalid attribute name '${attribute.slice(0, 40)}'`, nameStart);
        while (j < n && isSpace(source.charCodeAt(j))) j++;
        if (source[j] !== '=') fail(`attribute ${attribute} without a value`, j);
        j++;
        while (j < n && isSpace(source.charCodeAt(j))) j++;
        const quote = source[j];
        if (quote !== '"' && quote !== "'") fail(`attribute ${attribute} without quotes`, j);
        const close = source.indexOf(quote, j + 1);
        if (close < 0) fail(`an unterminated value of attribute ${attribute}`, j);
        const rawValue = source.slice(j + 1, close);
        if (rawValue.includes('<')) fail(`'<' in the value of attribute ${attribute}`, j);
        if (element.attributes.has(attribute)) fail(`attribute ${attribute} given twice`, nameStart);
        element.attributes.set(attribute, decodeEntities(rawValue, j + 1, fail));
        j = close + 1;
      }
      const parent = stack[stack.length - 1];
      if (parent) parent.children.push(element);
      else root = element;
      if (!selfClosing) stack.push(element);
      i = j;
    }
  }
  const open = stack[stack.length - 1];
  if (open) fail(`element <${open.name}> is not closed`, n);
  if (!root) fail('no root element', n);
  return root;
}

/** The first child element with this name, or undefined. */
export function childNamed(element: XmlElement, name: string): XmlElement | undefined {
  return element.children.find((child) => child.name === name);
}
