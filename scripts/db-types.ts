// The database's table types, generated. `npm run db:types` writes packages/server/src/platform/db/schema.ts
// from a fresh in-memory PGlite migrated by the server's own migrate(); `npm run db:types:check` (the
// first step of `npm run check`) generates the same text in memory and fails when the committed file
// differs, so neither a migration without its types nor a hand edit of the generated file can land.
//
// The catalogue gives the names, types, nullability, defaults, generated columns, comments (COMMENT ON
// in the migrations) and the values of `CHECK (col IN (…))` constraints (a literal union). What it
// cannot give is in the two tables below: a JSON column's TypeScript shape (OVERRIDES), and the CHECK
// columns kept as plain string until their callers are typed (PLAIN_TEXT).
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { openDatabase, type RawSql } from '../packages/server/src/platform/db/database.js';
import { migrate } from '../packages/server/src/platform/db/migrate.js';

const TARGET = fileURLToPath(new URL('../packages/server/src/platform/db/schema.ts', import.meta.url));
const TARGET_NAME = 'packages/server/src/platform/db/schema.ts';

/**
 * Column types the catalogue cannot give, by `table.column`: the whole TypeScript type of the column.
 * Every json/jsonb column needs one (the generator refuses to guess); the application writes JSON
 * columns as text (JSON.stringify), so their insert and update types are string.
 */
const OVERRIDES: Readonly<Record<string, string>> = {
  // A GeoJSON geometry; the annotations module validates it before it is written.
  'annotations.geometry': 'ColumnType<unknown, string, string>',
  // What an .mld import counted (mldImport.ts).
  'mld_files.counts':
    'ColumnType<{ hpfs: number; points: number; regions: number; lines: number } | null, string | null, string | null>',
  // A study's read-outcome configuration (issue 30): read back through the domain's schemas
  // (studies/studyConfig.ts), so the row's shape is not trusted as a type here.
  'studies.endpoints': 'ColumnType<unknown, string | undefined, string>',
  'studies.adjudication': 'ColumnType<unknown, string | null | undefined, string | null>',
  // What an electronic signature signed (issue 30): canonical JSON, written once (signatureService.ts).
  'signatures.content': 'ColumnType<unknown, string, never>',
};

/**
 * Text columns whose CHECK list is not made a literal union (yet): code that writes or filters them
 * passes a plain `string`, so the union would not compile there. Type those callers, then remove the
 * column here. Every other `CHECK (col IN (…))` column gets its union.
 */
const PLAIN_TEXT: ReadonlySet<string> = new Set([
  'annotations.annotation_type', // test/factories.ts
  'annotations.source', // annotationService.ts (a row builder's 'CR' widened to string)
  'cases.on_hold_from', // caseService.ts, demoCases.ts (any CaseStatus), test/routes.test.ts
  'cases.status', // studyQueries.ts (a string[] filter), test/factories.ts
  'images.processing_status', // test/factories.ts, test/permissions.issue26.test.ts
  'images.status', // studyQueries.ts (a string[] filter), test/factories.ts
]);

/** PostgreSQL scalar types → TypeScript, as the two drivers return them (platform/db/database.ts). */
const SCALARS: Readonly<Record<string, string>> = {
  bool: 'boolean',
  int2: 'number',
  int4: 'number',
  int8: 'number', // parsed as a number by both drivers: every value we keep fits in 2^53
  float4: 'number',
  float8: 'number',
  text: 'string',
  varchar: 'string',
  bpchar: 'string',
  uuid: 'string',
  inet: 'string',
  date: 'string', // 'YYYY-MM-DD': both drivers return calendar dates as text
  timestamptz: 'Date',
  timestamp: 'Date',
};

const TIMESTAMP_ALIAS = 'type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;';
const TIMESTAMP_ALIAS_DOC = 'A timestamp with a default: read as a Date, written as a Date or ISO text (or left out).';

interface ColumnRow {
  table_name: string;
  column_name: string;
  type_name: string;
  type_kind: string;
  element_type: string | null;
  not_null: boolean;
  has_default: boolean;
  generated: string;
  identity: string;
  comment: string | null;
}

interface Column extends ColumnRow {
  union: string[] | null;
}

interface Table {
  name: string;
  comment: string | null;
  columns: Column[];
}

/** Reads the ordinary tables of the public schema, with their columns in order and their comments. */
async function introspect(raw: Omit<RawSql, 'session'>): Promise<Table[]> {
  const tables = await raw.query<{ name: string; comment: string | null }>(`
    SELECT c.relname AS name, obj_description(c.oid, 'pg_class') AS comment
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
     ORDER BY c.relname`);
  const columns = await raw.query<ColumnRow>(`
    SELECT c.relname AS table_name, a.attname AS column_name, t.typname AS type_name, t.typtype AS type_kind,
           e.typname AS element_type, a.attnotnull AS not_null, a.atthasdef AS has_default,
           a.attgenerated::text AS generated, a.attidentity::text AS identity,
           col_description(c.oid, a.attnum) AS comment
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      JOIN pg_type t ON t.oid = a.atttypid
      LEFT JOIN pg_type e ON e.oid = t.typelem AND t.typcategory = 'A'
     WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
     ORDER BY c.relname, a.attnum`);
  const checks = await raw.query<{ table_name: string; column_name: string; definition: string }>(`
    SELECT c.relname AS table_name, a.attname AS column_name, pg_get_constraintdef(k.oid) AS definition
      FROM pg_constraint k
      JOIN pg_class c ON c.oid = k.conrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = k.conkey[1]
     WHERE n.nspname = 'public' AND k.contype = 'c' AND cardinality(k.conkey) = 1
     ORDER BY k.conname`);
  const enums = await raw.query<{ type_name: string; label: string }>(`
    SELECT t.typname AS type_name, e.enumlabel AS label
      FROM pg_enum e JOIN pg_type t ON t.oid = e.enumtypid ORDER BY t.typname, e.enumsortorder`);

  // The hand tables name real columns: an entry left behind by a changed schema is an error.
  const known = new Set(columns.map((c) => `${c.table_name}.${c.column_name}`));
  const checked = new Set(checks.map((c) => `${c.table_name}.${c.column_name}`));
  for (const key of Object.keys(OVERRIDES))
    if (!known.has(key)) throw new Error(`OVERRIDES names ${key}, which the migrated database does not have`);
  for (const key of PLAIN_TEXT)
    if (!checked.has(key)) throw new Error(`PLAIN_TEXT names ${key}, which has no CHECK constraint`);

  const unions = new Map<string, string[]>();
  for (const check of checks) {
    const values = checkValues(check.definition, check.column_name);
    if (!values) continue;
    const key = `${check.table_name}.${check.column_name}`;
    if (PLAIN_TEXT.has(key)) continue;
    const before = unions.get(key);
    unions.set(key, before ? before.filter((v) => values.includes(v)) : values);
  }
  const enumLabels = new Map<string, string[]>();
  for (const { type_name, label } of enums) enumLabels.set(type_name, [...(enumLabels.get(type_name) ?? []), label]);

  return tables.map((table) => ({
    name: table.name,
    comment: table.comment,
    columns: columns
      .filter((c) => c.table_name === table.name)
      .map((c) => ({
        ...c,
        union:
          unions.get(`${c.table_name}.${c.column_name}`) ??
          (c.type_kind === 'e' ? (enumLabels.get(c.type_name) ?? null) : null),
      })),
  }));
}

/** A text literal as pg_get_constraintdef prints it; the capturing form reads its value. */
const TEXT_LITERAL = `'(?:[^']|'')*'::text`;
const TEXT_VALUE = /'((?:[^']|'')*)'::text/g;

/**
 * The values a CHECK constraint allows when it says exactly `col IN ('a', 'b', …)` (PostgreSQL keeps
 * that as `col = ANY (ARRAY['a'::text, …])`) or `col = 'a'` on a text column; any other constraint
 * (a range, a length, an OR) gives null and leaves the column's type as it is.
 */
function checkValues(definition: string, column: string): string[] | null {
  const quoted = `"${column.replaceAll('"', '""')}"`;
  const name = `(?:${[column, quoted].map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`;
  const list = `${TEXT_LITERAL}(?:, ${TEXT_LITERAL})*`;
  const match =
    new RegExp(`^CHECK \\(\\(${name} = ANY \\(ARRAY\\[(${list})\\]\\)\\)\\)$`).exec(definition) ??
    new RegExp(`^CHECK \\(\\(${name} = (${TEXT_LITERAL})\\)\\)$`).exec(definition);
  if (!match?.[1]) return null;
  return [...match[1].matchAll(TEXT_VALUE)].map((m) => (m[1] ?? '').replaceAll("''", "'"));
}

function scalarType(typeName: string, table: string, column: string): string {
  const ts = SCALARS[typeName];
  if (ts) return ts;
  if (typeName === 'json' || typeName === 'jsonb')
    throw new Error(`${table}.${column} is ${typeName}: give its TypeScript type in OVERRIDES (scripts/db-types.ts)`);
  throw new Error(
    `${table}.${column}: no TypeScript type for PostgreSQL type ${typeName}; add it to SCALARS or OVERRIDES (scripts/db-types.ts)`,
  );
}

/** The column's Kysely type: the value type, `| null`, and Generated/GeneratedAlways/Timestamp for what the database fills. */
function columnType(table: string, column: Column): string {
  const override = OVERRIDES[`${table}.${column.column_name}`];
  if (override) return override;
  const base = column.union
    ? column.union.map((v) => `'${v.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`).join(' | ')
    : column.element_type
      ? `${scalarType(column.element_type, table, column.column_name)}[]`
      : scalarType(column.type_name, table, column.column_name);
  const value = column.not_null ? base : `${base} | null`;
  if (column.generated === 's' || column.identity === 'a') return `GeneratedAlways<${value}>`;
  if (column.has_default || column.identity === 'd') {
    if (value === 'Date') return 'Timestamp';
    return `Generated<${value}>`;
  }
  return value;
}

function pascalCase(name: string): string {
  return name.replace(/(?:^|_)([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** A JSDoc comment, wrapped at 100 columns as the hand-written comments are (prettier leaves comments alone). */
function docComment(text: string, indent: string): string {
  const oneLine = `${indent}/** ${text.trim()} */`;
  if (!text.includes('\n') && oneLine.length <= 100) return oneLine;
  const width = 100 - indent.length - 3;
  const lines: string[] = [];
  for (const paragraph of text.trim().split('\n')) {
    let line = '';
    for (const word of paragraph.split(/\s+/).filter(Boolean)) {
      if (line && line.length + 1 + word.length > width) {
        lines.push(line);
        line = word;
      } else line = line ? `${line} ${word}` : word;
    }
    lines.push(line);
  }
  return [`${indent}/**`, ...lines.map((l) => `${indent} * ${l}`.trimEnd()), `${indent} */`].join('\n');
}

function render(tables: Table[]): string {
  const body: string[] = [];
  for (const table of tables) {
    body.push('');
    if (table.comment) body.push(docComment(table.comment, ''));
    body.push(`export interface ${pascalCase(table.name)}Table {`);
    for (const column of table.columns) {
      if (column.comment) body.push(docComment(column.comment, '  '));
      body.push(`  ${column.column_name}: ${columnType(table.name, column)};`);
    }
    body.push('}');
  }
  body.push('', 'export interface DB {');
  for (const table of tables) body.push(`  ${table.name}: ${pascalCase(table.name)}Table;`);
  body.push('}');
  const text = body.join('\n');

  const usesTimestamp = /\bTimestamp;/.test(text);
  const imports = ['ColumnType', 'Generated', 'GeneratedAlways'].filter(
    (name) => new RegExp(`\\b${name}<`).test(text) || (name === 'ColumnType' && usesTimestamp),
  );
  return [
    '// Generated by npm run db:types — do not edit. From a fresh database migrated with',
    '// packages/server/migrations/*.sql; table and column comments are COMMENT ON statements there,',
    "// a JSON column's shape and the CHECK lists still typed string are in scripts/db-types.ts.",
    '// npm run db:types:check (part of npm run check) fails when this file differs.',
    '//',
    "// int8 columns are numbers and date columns 'YYYY-MM-DD' strings: the drivers are set up so",
    '// (database.ts). Generated<…>: the database fills it when omitted; GeneratedAlways<…>: never written.',
    `import type { ${imports.join(', ')} } from 'kysely';`,
    ...(usesTimestamp ? ['', docComment(TIMESTAMP_ALIAS_DOC, ''), TIMESTAMP_ALIAS] : []),
    text,
    '',
  ].join('\n');
}

async function generate(): Promise<string> {
  const database = await openDatabase({});
  try {
    await migrate(database);
    const tables = await database.raw.session(introspect);
    const options = (await resolveConfig(TARGET)) ?? {};
    return await format(render(tables), { ...options, filepath: TARGET });
  } finally {
    await database.close();
  }
}

/** The lines that differ (- committed, + generated), by a longest common subsequence: the files are short. */
function lineDiff(before: string, after: string, limit = 60): string[] {
  const a = before.split('\n');
  const b = after.split('\n');
  const width = b.length + 1;
  const common = new Uint32Array((a.length + 1) * width); // common[i * width + j]: of a[i..] and b[j..]
  const at = (i: number, j: number): number => common[i * width + j] ?? 0;
  for (let i = a.length - 1; i >= 0; i -= 1)
    for (let j = b.length - 1; j >= 0; j -= 1)
      common[i * width + j] = a[i] === b[j] ? at(i + 1, j + 1) + 1 : Math.max(at(i + 1, j), at(i, j + 1));
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      i += 1;
      j += 1;
    } else if (i < a.length && (j === b.length || at(i + 1, j) >= at(i, j + 1))) {
      out.push(`  - ${String(i + 1).padStart(4)} ${a[i] ?? ''}`);
      i += 1;
    } else {
      out.push(`  + ${String(j + 1).padStart(4)} ${b[j] ?? ''}`);
      j += 1;
    }
  }
  return out.length > limit ? [...out.slice(0, limit), `  … and ${out.length - limit} more lines`] : out;
}

async function main(): Promise<void> {
  const check = process.argv.includes('--check');
  const generated = await generate();
  if (!check) {
    await writeFile(TARGET, generated);
    console.log(`${TARGET_NAME} written`);
    return;
  }
  const committed = await readFile(TARGET, 'utf8').catch(() => '');
  if (committed === generated) {
    console.log(`${TARGET_NAME} matches the migrations`);
    return;
  }
  console.error(
    [
      `${TARGET_NAME} differs from the types the migrations give (- committed, + generated):`,
      ...lineDiff(committed, generated),
      '',
      'It is generated: run `npm run db:types` and commit the result. What the database cannot say (a JSON',
      "column's shape, a CHECK list kept as string) goes in scripts/db-types.ts; a comment goes in a",
      'COMMENT ON statement of a new migration.',
    ].join('\n'),
  );
  process.exitCode = 1;
}

await main().catch((error: unknown) => {
  console.error(`npm run db:types: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
