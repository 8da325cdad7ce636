import { z } from 'zod';
import type { FastifySchemaCompiler } from 'fastify';
import { validatorCompiler as zodValidatorCompiler } from 'fastify-type-provider-zod';

/** `:id` path parameters: a positive PostgreSQL integer (the text is read as a number, see below). */
export const idParams = z.object({ id: z.number().int().positive().max(2_147_483_647) });

/** A plain decimal, as a query string or a path carries a number (no sign but '-', no hex, no exponent). */
const DECIMAL = /^-?\d{1,16}(\.\d{1,16})?$/;

type Inner = { _zod: { def: Record<string, unknown> & { type: string } } };

/** The schema under optional, nullable, default and the like (and a pipe's input). */
function unwrap(schema: Inner): Inner {
  let s = schema;
  for (let depth = 0; depth < 16; depth++) {
    const def = s._zod.def;
    const inner = (def.innerType ?? (def.type === 'pipe' ? def.in : undefined)) as Inner | undefined;
    if (!inner) return s;
    s = inner;
  }
  return s;
}

/** How each field of a query-string or path schema takes a number: 'one', 'many' (an array), or not at all. */
function numberFields(schema: unknown): Map<string, 'one' | 'many'> {
  const fields = new Map<string, 'one' | 'many'>();
  const root = schema && typeof schema === 'object' && '_zod' in schema ? unwrap(schema as Inner) : null;
  const shape = root?._zod.def.type === 'object' ? (root._zod.def.shape as Record<string, Inner>) : null;
  for (const [key, field] of Object.entries(shape ?? {})) {
    const inner = unwrap(field);
    if (inner._zod.def.type === 'number') fields.set(key, 'one');
    else if (inner._zod.def.type === 'array' && unwrap(inner._zod.def.element as Inner)._zod.def.type === 'number')
      fields.set(key, 'many');
  }
  return fields;
}

const toNumber = (value: unknown) => (typeof value === 'string' && DECIMAL.test(value) ? Number(value) : value);

/**
 * Fastify's validator compiler (issue 26): JSON bodies are validated as sent, with their JSON types
 * (a number must be a JSON number: no schema coerces). Query strings and path parameters are text:
 * there, and only there, a field whose schema is a number (or an array of numbers) has a plain
 * decimal read as that number before the schema checks it; anything else stays text and is refused
 * by the schema, naming the field ('page must be number').
 */
export const validatorCompiler: FastifySchemaCompiler<z.ZodType> = (route) => {
  const validate = zodValidatorCompiler(route);
  if (route.httpPart !== 'querystring' && route.httpPart !== 'params') return validate;
  const fields = numberFields(route.schema);
  if (fields.size === 0) return validate;
  return (data) => {
    if (!data || typeof data !== 'object') return validate(data);
    const read: Record<string, unknown> = { ...(data as Record<string, unknown>) };
    for (const [key, kind] of fields) {
      const value = read[key];
      if (value === undefined) continue;
      read[key] = kind === 'many' && Array.isArray(value) ? value.map(toNumber) : toNumber(value);
    }
    return validate(read);
  };
};
