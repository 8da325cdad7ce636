import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Writable } from 'node:stream';
import PDFDocument from 'pdfkit';
import type { Compilable, Kysely } from 'kysely';
import { csvLine, type CsvValue } from '@lamina/domain';
import type { DB } from '../../platform/db/schema.js';
import { forEachBatch } from '../../platform/db/cursor.js';
import type { VerifyResult } from '../../platform/audit/verify.js';

const require = createRequire(import.meta.url);
const FONT_DIR = path.join(path.dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf');
const FONT = path.join(FONT_DIR, 'DejaVuSans.ttf');
const FONT_BOLD = path.join(FONT_DIR, 'DejaVuSans-Bold.ttf');

/** A4 landscape, points. */
const PAGE = { width: 841.89, height: 595.28 };
const MARGIN = 28;
const BODY_SIZE = 6.5;
const HEAD_SIZE = 7;
const PAD = 2;
/** Where rows stop (the footer sits below). */
const BOTTOM = PAGE.height - 34;
/** A cell's text is cut here (the CSV export holds every character). */
export const PDF_CELL_MAX = 1200;

interface Column {
  title: string;
  width: number;
  /** Which cells (AUDIT_TRAIL_HEADER indexes) the column shows, one per line. */
  cells: number[];
  /** Break lines only after an underscore (action names: never `IMAGE_STATUS_CHA` / `NGED`). */
  wrapAtUnderscores?: boolean;
}

/** The table: the export's 15 fields in 10 columns, 786 pt wide (A4 landscape less margins). */
const COLUMNS: Column[] = [
  { title: 'Event', width: 34, cells: [0] },
  { title: 'Time (UTC / local)', width: 82, cells: [1, 2] },
  { title: 'User / role', width: 90, cells: [3, 4, 5] },
  { title: 'Action', width: 72, cells: [6], wrapAtUnderscores: true },
  { title: 'Object', width: 86, cells: [7, 8, 9] },
  { title: 'Field', width: 56, cells: [10] },
  { title: 'Old value', width: 124, cells: [11] },
  { title: 'New value', width: 124, cells: [12] },
  { title: 'Reason for change', width: 70, cells: [13] },
  { title: 'Client IP', width: 48, cells: [14] },
];

export interface AuditPdfMeta {
  title: string;
  /** The filters, one line each. */
  filters: string[];
  /** "Generated 2026-11-25 18:05:00 CET (17:05:00 UTC) by Jane Doe (jane@example.org)". */
  generated: string;
  /** The chain walked over the exported range: from its first event to its last (verifyAuditRange). */
  chain: VerifyResult & { from: number; to: number };
  maxId: number;
}

function cap(text: string): string {
  return text.length > PDF_CELL_MAX
    ? `${text.slice(0, PDF_CELL_MAX)} … [${text.length - PDF_CELL_MAX} more characters: see the CSV export]`
    : text;
}

/**
 * `text` in lines no wider than `width`, broken only after an underscore (issue 29 item 17: the
 * action column never breaks a name mid-word). A part wider than the line alone keeps a line of
 * its own (the renderer then breaks it where it must); text without underscores is left as it is.
 */
export function wrapAtUnderscores(text: string, width: number, widthOf: (s: string) => number): string {
  if (!text.includes('_')) return text;
  const lines: string[] = [];
  let line = '';
  for (const part of text.split(/(?<=_)/)) {
    if (line !== '' && widthOf(line + part) > width) {
      lines.push(line);
      line = part;
    } else line += part;
  }
  lines.push(line);
  return lines.join('\n');
}

/** The text of each column of a row: its cells, one line each, cut at PDF_CELL_MAX. */
function columnTexts(cells: readonly CsvValue[], widthOf: (s: string) => number): string[] {
  return COLUMNS.map((c) =>
    c.cells
      .map((i) => cells[i])
      .filter((v) => v !== null && v !== undefined && v !== '')
      .map((v) => cap(String(v)))
      .map((v) => (c.wrapAtUnderscores ? wrapAtUnderscores(v, c.width - 2 * PAD, widthOf) : v))
      .join('\n'),
  );
}

/**
 * The audit trail as a PDF (issue 16): landscape A4, fonts embedded (DejaVu Sans), PDF/A-2b, the
 * table's header row on every page, "Page X of Y", the filters, when and by whom it was generated,
 * and a closing statement with the hash-chain check over the exported range and the SHA-256 of the
 * export's rows (the UTF-8 CSV lines the CSV export writes for the same rows, so one verifies the
 * other). The rows are hashed as `cells` renders them — the values as this exporter sees them
 * (auditTrailValues.ts), the same cells the CSV export writes for them; the chain check is of the
 * stored rows.
 *
 * Two passes over the same rows (ids ≤ maxId, chain order), each through a database cursor: the
 * first measures every row's height and hashes the rows, so the page count is known before the
 * first page is written; the second draws. Memory holds one batch and one number per row; the PDF
 * leaves page by page, waiting for a slow client.
 */
export async function writeAuditTrailPdf<R>(
  out: Writable,
  options: {
    db: Kysely<DB>;
    query: Compilable<R>;
    cells: (row: R) => CsvValue[];
    /** Called with each batch of each pass before its cells are taken, in the cursor's transaction. */
    prepare?: (rows: R[], db: Kysely<DB>) => Promise<void>;
    meta: AuditPdfMeta;
  },
): Promise<void> {
  const doc = new PDFDocument({
    size: 'A4',
    layout: 'landscape',
    margins: { top: MARGIN, left: MARGIN, right: MARGIN, bottom: 8 },
    autoFirstPage: false,
    font: FONT,
    subset: 'PDF/A-2b',
    pdfVersion: '1.7',
    lang: 'en',
    displayTitle: true,
    info: {
      Title: options.meta.title,
      Author: 'Lamina',
      Subject: 'Audit trail export',
      Creator: 'Lamina',
      Producer: 'Lamina (PDFKit)',
    },
  });
  // The default font is cached under its path: \`doc.font(FONT)\` finds it. (A second name for the
  // same file would make PDFKit open and parse the file again at every call.)
  doc.registerFont('bold', FONT_BOLD);
  doc.on('data', (chunk: Buffer) => out.write(chunk));
  const ended = once(doc, 'end');
  const flush = async () => {
    if (out.writableNeedDrain) await once(out, 'drain');
    if (out.destroyed) throw new Error('The download was closed');
  };

  doc.addPage();
  const heightCache = new Map<string, number>();
  const measure = (text: string, width: number): number => {
    if (text === '') return BODY_SIZE + 2;
    const key = text.length <= 80 ? `${width}|${text}` : null;
    const known = key ? heightCache.get(key) : undefined;
    if (known !== undefined) return known;
    const h = doc
      .font(FONT)
      .fontSize(BODY_SIZE)
      .heightOfString(text, { width: width - 2 * PAD });
    if (key) {
      if (heightCache.size > 50_000) heightCache.clear();
      heightCache.set(key, h);
    }
    return h;
  };
  const widthOf = (text: string): number => doc.font(FONT).fontSize(BODY_SIZE).widthOfString(text);
  const rowHeight = (texts: string[]) =>
    Math.max(...texts.map((t, i) => measure(t, COLUMNS[i]?.width ?? 50))) + 2 * PAD;

  // Pass 1: heights and the hash of the rows.
  const heights: number[] = [];
  const hash = createHash('sha256');
  let firstId: CsvValue = null;
  let lastId: CsvValue = null;
  await forEachBatch(options.db, options.query, async (rows, tx) => {
    await options.prepare?.(rows, tx);
    for (const row of rows) {
      const cells = options.cells(row);
      hash.update(csvLine(cells));
      firstId ??= cells[0] ?? null;
      lastId = cells[0] ?? null;
      heights.push(rowHeight(columnTexts(cells, widthOf)));
      if (heights.length % 2000 === 0) forgetLayouts(doc);
    }
  });
  const sha256 = hash.digest('hex');
  const closing = closingStatement(options.meta, heights.length, firstId, lastId, sha256);

  // The layout: the title block on the first page, then the table.
  const headerRow =
    Math.max(
      ...COLUMNS.map((c) =>
        doc
          .font('bold')
          .fontSize(HEAD_SIZE)
          .heightOfString(c.title, { width: c.width - 2 * PAD }),
      ),
    ) +
    2 * PAD;
  const titleBlock = titleHeight(doc, options.meta);
  const closingHeight =
    doc
      .font(FONT)
      .fontSize(8)
      .heightOfString(closing.join('\n'), { width: PAGE.width - 2 * MARGIN }) + 12;
  const tableTop = (page: number) => MARGIN + 12 + (page === 1 ? titleBlock : 0);
  let pages = 1;
  let y = tableTop(1) + headerRow;
  const breaks: number[] = []; // the index of the first row of each page after the first
  for (const [i, h] of heights.entries()) {
    if (y + h > BOTTOM) {
      pages++;
      breaks.push(i);
      y = tableTop(pages) + headerRow;
    }
    y += h;
  }
  if (y + closingHeight > BOTTOM) pages++;

  // Pass 2: drawing.
  let page = 1;
  const startPage = () => {
    drawRunningHeader(doc, options.meta.title, page === 1 ? null : 'continued');
    if (page === 1) drawTitleBlock(doc, options.meta);
    drawFooter(doc, page, pages, options.meta.generated);
    y = tableTop(page);
    drawHeaderRow(doc, y, headerRow);
    y += headerRow;
  };
  startPage();
  let index = 0;
  let nextBreak = 0;
  await forEachBatch(options.db, options.query, async (rows, tx) => {
    await options.prepare?.(rows, tx);
    for (const row of rows) {
      if (breaks[nextBreak] === index) {
        nextBreak++;
        page++;
        doc.addPage();
        if (page % 25 === 0) forgetLayouts(doc);
        await flush();
        startPage();
      }
      const h = heights[index] ?? 0;
      drawRow(doc, y, h, columnTexts(options.cells(row), widthOf), index % 2 === 1);
      y += h;
      index++;
    }
  });
  if (y + closingHeight > BOTTOM) {
    page++;
    doc.addPage();
    drawRunningHeader(doc, options.meta.title, 'continued');
    drawFooter(doc, page, pages, options.meta.generated);
    y = tableTop(page);
  }
  doc
    .font(FONT)
    .fontSize(8)
    .fillColor('#000000')
    .text(closing.join('\n'), MARGIN, y + 10, { width: PAGE.width - 2 * MARGIN });
  doc.end();
  await ended;
}

/**
 * PDFKit caches the glyph layout of every word it sets, per font, for the document's life: an audit
 * trail's words rarely repeat (times, ids, JSON values), so on 100 000 events the cache grew past
 * 600 MB and its garbage slowed everything. Dropped every few pages, it keeps what a page reuses.
 */
function forgetLayouts(doc: PDFKit.PDFDocument): void {
  const families = (doc as unknown as { _fontFamilies?: Record<string, { layoutCache?: unknown }> })._fontFamilies;
  for (const font of Object.values(families ?? {}))
    if (font.layoutCache !== undefined) font.layoutCache = Object.create(null);
}

/** The closing statement: what was exported, the chain check, the SHA-256 of the rows. */
function closingStatement(
  meta: AuditPdfMeta,
  count: number,
  firstId: CsvValue,
  lastId: CsvValue,
  sha256: string,
): string[] {
  const { from, to, rowsChecked, brokenAt } = meta.chain;
  const chain =
    to < from
      ? 'Hash chain: no events in the range to check.'
      : meta.chain.ok
        ? `Hash chain: verified intact from event ${from} to event ${to} (${rowsChecked} events checked, each linked to the one before it${from > 1 ? `, the first to event ${from - 1}` : ' and the first to the chain’s start'}).`
        : `Hash chain: BROKEN — first broken link at event ${brokenAt?.id ?? '?'} (${brokenAt?.problem ?? 'unknown'}); checked from event ${from}.`;
  return [
    `End of the audit trail: ${count} event${count === 1 ? '' : 's'}${count > 0 ? ` (event ${String(firstId)} to event ${String(lastId)})` : ''}.`,
    chain,
    `SHA-256 of the exported rows (each row as the UTF-8 CSV line the CSV export writes for it, its values as shown here, header excluded): ${sha256}`,
  ];
}

function titleHeight(doc: PDFKit.PDFDocument, meta: AuditPdfMeta): number {
  const width = PAGE.width - 2 * MARGIN;
  return (
    doc.font('bold').fontSize(14).heightOfString(meta.title, { width }) +
    doc
      .font(FONT)
      .fontSize(8)
      .heightOfString([...meta.filters, meta.generated].join('\n'), { width }) +
    14
  );
}

function drawRunningHeader(doc: PDFKit.PDFDocument, title: string, note: string | null): void {
  doc
    .font(FONT)
    .fontSize(7)
    .fillColor('#555555')
    .text(note ? `${title} (${note})` : title, MARGIN, MARGIN, { width: PAGE.width - 2 * MARGIN, lineBreak: false });
}

function drawTitleBlock(doc: PDFKit.PDFDocument, meta: AuditPdfMeta): void {
  const width = PAGE.width - 2 * MARGIN;
  doc
    .font('bold')
    .fontSize(14)
    .fillColor('#000000')
    .text(meta.title, MARGIN, MARGIN + 12, { width });
  doc
    .font(FONT)
    .fontSize(8)
    .fillColor('#222222')
    .text([...meta.filters, meta.generated].join('\n'), { width });
}

function drawFooter(doc: PDFKit.PDFDocument, page: number, pages: number, generated: string): void {
  const y = PAGE.height - 22;
  doc.font(FONT).fontSize(7).fillColor('#555555');
  doc.text(generated, MARGIN, y, { width: PAGE.width - 2 * MARGIN - 100, lineBreak: false });
  doc.text(`Page ${page} of ${pages}`, PAGE.width - MARGIN - 100, y, { width: 100, align: 'right', lineBreak: false });
}

function drawHeaderRow(doc: PDFKit.PDFDocument, y: number, height: number): void {
  doc.rect(MARGIN, y, PAGE.width - 2 * MARGIN, height).fill('#e6e9ee');
  doc.font('bold').fontSize(HEAD_SIZE).fillColor('#000000');
  let x = MARGIN;
  for (const c of COLUMNS) {
    doc.text(c.title, x + PAD, y + PAD, { width: c.width - 2 * PAD });
    x += c.width;
  }
}

function drawRow(doc: PDFKit.PDFDocument, y: number, height: number, texts: string[], shaded: boolean): void {
  if (shaded) doc.rect(MARGIN, y, PAGE.width - 2 * MARGIN, height).fill('#f5f6f8');
  doc.font(FONT).fontSize(BODY_SIZE).fillColor('#000000');
  let x = MARGIN;
  for (const [i, c] of COLUMNS.entries()) {
    const text = texts[i] ?? '';
    if (text !== '') doc.text(text, x + PAD, y + PAD, { width: c.width - 2 * PAD });
    x += c.width;
  }
}
