import { z } from 'zod';
import { TEXT_LIMITS } from './constants.js';
import { csvLine } from './csv.js';
import { IM_IMAGE_COLUMNS, type ImImageColumnKey } from './imageManagement.js';
import type { Permission } from './permissions.js';

/**
 * Sample-data import (issue 12; doc 2 §3–4, §7–8; docs/SAMPLE-DATA.md): a lab's table of slide
 * metadata applied to the images it names. The file format, its parser, the messages and the wire
 * shapes, once.
 */

export const SAMPLE_MESSAGES = {
  unableToCreateSignedUrls: 'Unable to create sample data signed URLs.',
  unableToImport: 'Unable to import sample data.',
  failedToProcess: 'Warning: failed to process the sample data.',
  complete: 'Sample Data Import Complete',
  notCsv: 'Sample data must be a .csv or .txt file',
  empty: 'The sample data file has no rows',
  tooManyRows: (max: number) => `The sample data file has more than ${max.toLocaleString('en-US')} rows`,
  tooLarge: (mb: number) => `The sample data file is larger than ${mb} MB`,
  noKeyColumn: `The sample data file needs a key column: File Name, Accession Number or Barcode`,
  unknownColumns: (names: readonly string[]) =>
    `Unknown column${names.length === 1 ? '' : 's'} ${names.map((n) => `'${n}'`).join(', ')}; see the template for the columns`,
  duplicateColumn: (name: string) => `The column '${name}' appears twice`,
  secondKey: (name: string) =>
    `'${name}' identifies images and cannot be set; a file has one key column (the first of File Name, Accession Number, Barcode)`,
  notUtf8: 'The sample data file is not UTF-8 text',
  badQuotes: (line: number) => `Line ${line}: a quoted field is not closed`,
  alreadyImported: 'This sample data file was imported already',
  noSuchImport: 'No such sample data import',
  // Per row (the result file's Message column).
  emptyKey: (label: string) => `${label} is empty`,
  noMatch: (label: string, value: string) => `No image matches ${label} ${value}`,
  severalMatch: (label: string, value: string) => `Several images match ${label} ${value}`,
  wrongCellCount: (expected: number, got: number) => `The row has ${got} fields; the header has ${expected}`,
  updated: (fields: number) => `${fields} field${fields === 1 ? '' : 's'} updated`,
  unchanged: 'No changes',
  studyMatched: (study: string) => `assigned to study ${study} by its Protocol ID`,
  caseMatched: (procId: string) => `assigned to case ${procId}`,
  dataIncomplete: 'Data Incomplete: subject, site or visit missing',
  batchFailed: 'The row could not be saved',
} as const;

/** The permission of the sample-data Upload button (doc 2 §6, image toolbar; doc 2 §2.5). */
export const SAMPLE_UPLOAD_PERMISSION: Permission = 'IM_ImagesListTab_UploadImagestoAssignedStudiesOnly';

/** Files the dialog accepts (doc 2 §9). */
export const SAMPLE_FILE_EXTENSIONS = ['.csv', '.txt'] as const;
export const SAMPLE_MAX_ROWS = 100_000;
export const SAMPLE_MAX_MB = 50;

export function isSampleFileName(name: string): boolean {
  const lower = name.toLowerCase();
  return SAMPLE_FILE_EXTENSIONS.some((ext) => lower.endsWith(ext)) && name.length <= TEXT_LIMITS.fileName;
}

/** The key columns, in the order one is chosen when a file has several (the first present wins). */
export const SAMPLE_KEYS = [
  { label: 'File Name', field: 'name' },
  { label: 'Accession Number', field: 'accession_number' },
  { label: 'Barcode', field: 'machine_readable_barcode' },
] as const;
export type SampleKey = (typeof SAMPLE_KEYS)[number];

/** The case-matching value: the Endo Procedure ID of the image's case (not stored on the image). */
export const SAMPLE_ENDO_LABEL = 'Endo Procedure ID';

/** Image columns a sample-data row may set (by their labels), in the template's order. */
export const SAMPLE_FIELD_KEYS = [
  'accessionNumber',
  'protocolId',
  'siteId',
  'subjectId',
  'visitId',
  'labVisitId',
  'anatomicalSegment',
  'specimenCollectionDate',
  'qaComments',
] as const satisfies readonly ImImageColumnKey[];
export type SampleFieldKey = (typeof SAMPLE_FIELD_KEYS)[number];

export const SAMPLE_FIELDS = SAMPLE_FIELD_KEYS.map((key) => {
  const column = IM_IMAGE_COLUMNS.find((c) => c.key === key);
  if (!column) throw new Error(`no image column ${key}`);
  return column;
});

/** The template's header: the key column File Name, the fields, the case-matching value. */
export const SAMPLE_TEMPLATE_HEADER: readonly string[] = [
  'File Name',
  ...SAMPLE_FIELDS.map((c) => c.label),
  SAMPLE_ENDO_LABEL,
];

/** The template file the dialog offers (a header line only). */
export function sampleTemplateCsv(): string {
  return csvLine(SAMPLE_TEMPLATE_HEADER);
}

export interface SampleTable {
  header: string[];
  rows: string[][];
  delimiter: ',' | '\t';
}

/**
 * Parses a sample-data file: UTF-8 with or without a byte-order mark, comma- or tab-separated (the
 * header line decides: a tab there and no comma means tabs), RFC 4180 quoting, CRLF or LF lines,
 * blank lines skipped. Throws an Error with the user's message when it cannot be read.
 */
export function parseSampleTable(text: string): SampleTable {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const firstLine = body.slice(0, body.search(/\r?\n|$/));
  const delimiter: ',' | '\t' = firstLine.includes('\t') && !firstLine.includes(',') ? '\t' : ',';
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let recordLine = 1;
  const endRecord = () => {
    record.push(field);
    if (!(record.length === 1 && record[0]?.trim() === '')) records.push(record);
    record = [];
    field = '';
    recordLine = line;
  };
  for (let i = 0; i < body.length; i++) {
    const ch = body.charAt(i);
    if (quoted) {
      if (ch === '"') {
        if (body.charAt(i + 1) === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else {
        if (ch === '\n') line++;
        field += ch;
      }
    } else if (ch === '"' && field.trim() === '') {
      field = '';
      quoted = true;
    } else if (ch === delimiter) {
      record.push(field);
      field = '';
    } else if (ch === '\n' || (ch === '\r' && body.charAt(i + 1) === '\n')) {
      if (ch === '\r') i++;
      line++;
      endRecord();
    } else field += ch;
  }
  if (quoted) throw new Error(SAMPLE_MESSAGES.badQuotes(recordLine));
  if (field !== '' || record.length > 0) endRecord();
  const [header, ...rows] = records;
  if (!header) throw new Error(SAMPLE_MESSAGES.empty);
  return { header: header.map((h) => h.trim()), rows, delimiter };
}

/** What a header names: its key column, the fields it sets (by column index), the Endo column. */
export interface SampleColumns {
  key: SampleKey;
  keyIndex: number;
  fields: { index: number; key: SampleFieldKey; label: string }[];
  endoIndex: number | null;
}

/**
 * Reads a header (labels compared without regard to case and surrounding spaces): one key column
 * is used, the first of File Name, Accession Number, Barcode present; beside File Name, Accession
 * Number is a field to set; another File Name or Barcode column, an unknown or a repeated column
 * refuses the file.
 */
export function sampleColumns(header: readonly string[]): SampleColumns {
  const norm = (s: string) => s.trim().toLowerCase();
  const seen = new Set<string>();
  for (const h of header) {
    if (seen.has(norm(h))) throw new Error(SAMPLE_MESSAGES.duplicateColumn(h.trim()));
    seen.add(norm(h));
  }
  const indexOf = (label: string) => header.findIndex((h) => norm(h) === norm(label));
  const key = SAMPLE_KEYS.find((k) => indexOf(k.label) >= 0);
  if (!key) throw new Error(SAMPLE_MESSAGES.noKeyColumn);
  const fields: SampleColumns['fields'] = [];
  const unknown: string[] = [];
  let endoIndex: number | null = null;
  header.forEach((h, index) => {
    if (norm(h) === norm(key.label)) return;
    if (norm(h) === norm(SAMPLE_ENDO_LABEL)) {
      endoIndex = index;
      return;
    }
    const field = SAMPLE_FIELDS.find((c) => norm(c.label) === norm(h));
    if (field) fields.push({ index, key: field.key as SampleFieldKey, label: field.label });
    else if (SAMPLE_KEYS.some((k) => norm(k.label) === norm(h))) throw new Error(SAMPLE_MESSAGES.secondKey(h.trim()));
    else if (h.trim() !== '') unknown.push(h.trim());
  });
  if (unknown.length > 0) throw new Error(SAMPLE_MESSAGES.unknownColumns(unknown));
  return { key, keyIndex: indexOf(key.label), fields, endoIndex };
}

// ---------------------------------------------------------------------------------------------
// Wire shapes (doc 2 §7)
// ---------------------------------------------------------------------------------------------

export const sampleUploadRequestSchema = z.object({
  fileName: z
    .string()
    .trim()
    .min(1)
    .max(TEXT_LIMITS.fileName)
    .refine(isSampleFileName, { message: SAMPLE_MESSAGES.notCsv }),
});

export const sampleDataRequestSchema = z.object({
  s3SampleDataKey: z.string().min(1).max(1024),
  fileName: z.string().trim().min(1).max(TEXT_LIMITS.fileName),
  resultFileKey: z.string().min(1).max(1024),
});
export type SampleDataRequest = z.infer<typeof sampleDataRequestSchema>;

export const sampleUploadResponseSchema = z.object({
  success: z.literal(true),
  putSignedUrl: z.string(),
  sampleDataRequest: sampleDataRequestSchema,
});

export const sampleImportResultSchema = z.object({
  success: z.literal(true),
  message: z.string(),
  numRowsUpdated: z.number().int(),
  numFieldsUpdated: z.number().int(),
  numRowsFailed: z.number().int(),
  /** A link to the result CSV: the input rows with Result and Message. */
  s3SampleDataResponse: z.string(),
});
export type SampleImportResult = z.infer<typeof sampleImportResultSchema>;

export const sampleProgressQuerySchema = z.object({ s3SampleDataKey: z.string().min(1).max(1024) });
export const sampleProgressResponseSchema = z.object({
  success: z.literal(true),
  status: z.enum(['PROCESSING', 'COMPLETE', 'FAILED']),
  totalRows: z.number().int(),
  doneRows: z.number().int(),
});
export type SampleProgress = z.infer<typeof sampleProgressResponseSchema>;
