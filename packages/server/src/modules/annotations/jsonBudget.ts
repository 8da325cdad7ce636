const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const COMMA = 0x2c;

/** The most a JSON text may hold: objects and arrays, and values (in arrays and objects). */
export interface JsonBudget {
  containers: number;
  values: number;
}

/**
 * Whether a JSON text holds more objects and arrays (a `[` or `{` outside a string) or more values
 * (a `,` outside a string: each value after a container's first) than its budget: one pass over the
 * text, before JSON.parse builds any of it (V8: about 40 bytes of heap an empty array, 64 an object,
 * 72 an [x, y] position, 8 a number), so that what parsing builds is bounded whatever the text's
 * size. Malformed JSON is left to the parser.
 */
export function exceedsJsonBudget(text: string, budget: JsonBudget): boolean {
  let containers = 0;
  let values = 0;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (escaped) escaped = false;
      else if (c === BACKSLASH) escaped = true;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === COMMA) {
      if (++values > budget.values) return true;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++containers > budget.containers) return true;
    }
  }
  return false;
}
