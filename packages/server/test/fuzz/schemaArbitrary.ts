import fc from 'fast-check';
import { z } from 'zod';

/** The JSON Schema subset zod 4's `z.toJSONSchema` writes for our request schemas. */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  prefixItems?: JsonSchema[];
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  default?: unknown;
}

/** A request schema as JSON Schema (input side: what a client sends). */
export function toJsonSchema(schema: unknown): JsonSchema | null {
  if (!(schema instanceof z.ZodType)) return null;
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
}

/**
 * Overrides by property name: ids drawn from rows that exist, keys of real uploads … so that
 * generated requests get past "not found" and reach the handlers' deeper paths.
 */
export type Hints = (property: string) => fc.Arbitrary<unknown> | undefined;

const MAX_ARRAY = 4;

/** Valid-looking values for a JSON Schema (the fuzzer then mutates some of them). */
export function arbitraryFor(schema: JsonSchema, hints: Hints, root: JsonSchema = schema): fc.Arbitrary<unknown> {
  if (schema.$ref) {
    const name = schema.$ref.replace(/^#\/\$defs\//, '');
    const target = root.$defs?.[name];
    return target ? fc.constant(null).chain(() => arbitraryFor(target, hints, root)) : fc.anything();
  }
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const union = schema.anyOf ?? schema.oneOf;
  if (union) return fc.oneof(...union.map((s) => arbitraryFor(s, hints, root)));
  if (schema.allOf?.[0]) return arbitraryFor(schema.allOf[0], hints, root);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      return stringFor(schema);
    case 'integer':
      return fc.integer({ min: lowerBound(schema, -1000), max: upperBound(schema, 1000) });
    case 'number':
      return fc.double({ min: lowerBound(schema, -1000), max: upperBound(schema, 1000), noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      if (schema.prefixItems) return fc.tuple(...schema.prefixItems.map((s) => arbitraryFor(s, hints, root)));
      const minLength = schema.minItems ?? 0;
      return fc.array(schema.items ? arbitraryFor(schema.items, hints, root) : fc.jsonValue(), {
        minLength,
        maxLength: Math.max(minLength, Math.min(schema.maxItems ?? MAX_ARRAY, MAX_ARRAY)),
      });
    }
    case 'object': {
      const properties = schema.properties ?? {};
      const required = new Set(schema.required ?? []);
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, property] of Object.entries(properties)) {
        record[name] = hints(name) ?? arbitraryFor(property, hints, root);
      }
      return fc.record(record, { requiredKeys: [...required].filter((k) => k in properties) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function lowerBound(schema: JsonSchema, fallback: number): number {
  if (schema.minimum !== undefined) return Math.max(schema.minimum, -1e9);
  if (schema.exclusiveMinimum !== undefined) return Math.max(schema.exclusiveMinimum + 1, -1e9);
  return fallback;
}

function upperBound(schema: JsonSchema, fallback: number): number {
  if (schema.maximum !== undefined) return Math.min(schema.maximum, 1e9);
  if (schema.exclusiveMaximum !== undefined) return Math.min(schema.exclusiveMaximum - 1, 1e9);
  return Math.max(fallback, lowerBound(schema, fallback));
}

function stringFor(schema: JsonSchema): fc.Arbitrary<string> {
  if (schema.format === 'email') return fc.emailAddress();
  if (schema.pattern) {
    try {
      return fc.stringMatching(new RegExp(schema.pattern));
    } catch {
      // a pattern JavaScript cannot compile: plain strings below
    }
  }
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.max(minLength, Math.min(schema.maxLength ?? 40, 40));
  return fc.string({ minLength, maxLength });
}
