import type { Kysely } from 'kysely';
import {
  CASE_FIELDS,
  CASE_FIELD_VIEW_PERMISSIONS,
  IM_CASE_COLUMNS,
  IM_IMAGE_COLUMNS,
  IMAGE_EXTENSIONS,
  MLD_IMPORT_MESSAGES,
  READ_OUTCOMES_PERMISSION,
  VIEW_SPONSOR_PERMISSION,
  type Permission,
} from '@lamina/domain';
import type { DB } from '../../platform/db/schema.js';
import type { Principal } from '../../platform/auth/principal.js';
import { visibleStudies } from '../../platform/rbac/studyScope.js';
import { safeFileName } from '../../platform/storage/keys.js';
import { withoutStorageKeys } from '../../platform/storage/keysInText.js';

/**
 * The Old and New Value cells of the audit trail exports (issue 26, items 5 and 6). The audit rows
 * keep what was recorded — storage keys, scanner file names, ids; an export shows an inspector what
 * they mean, and no more than the exporter may see:
 *
 * - **storage keys** never: a JSON value's key-like members (`s3Key`, `heatmapKey`, `key` …) are
 *   left out, a value that is a key (field `s3_key` …) reads STORAGE_KEY_LABEL;
 * - **file names** only with AP_ImageData_ViewFilename, else the Object column's neutral
 *   `Image {id}`;
 * - **fields the exporter may not view** (the Image Management column tables, mayViewCaseField,
 *   the sponsor) read HIDDEN_VALUE_LABEL, old value and new;
 * - **failure reasons** (AUDIT_ERROR_REASON_ACTIONS: error messages, not text a user typed) lose
 *   their storage keys, and their file names by the file-name rule;
 * - **ids** named: people `First Last (username)`, images (by the same rule as file names), cases
 *   (Endo Procedure ID), studies (the name, for a study the exporter sees; else `Study {id}`),
 *   annotation classes, query reasons, roles, organizations.
 *
 * Which value holds what is AUDIT_VALUE_RULES (action → field → rule), the table of docs/REPORTS.md;
 * the actions whose values are shown as recorded are AUDIT_PLAIN_ACTIONS. A test fails when an
 * action in the code is in neither. Text (reasons, comments, statuses) is never touched, and a value
 * with nothing to change is returned as the very text recorded.
 *
 * Names are looked up per cursor batch, one query per kind of id (`prepare`), and kept in a small
 * cache across batches: memory stays bounded, however long the export.
 */

/** What an export shows for a storage key (to everyone). */
export const STORAGE_KEY_LABEL = '(storage key: not exported)';
/** What an export shows, as old and as new value, for a field the exporter may not view. */
export const HIDDEN_VALUE_LABEL = '(hidden: no view permission)';
/** A file name in a failure reason of something that is not an image (an .mld import), without the permission. */
export const FILE_NAME_LABEL = '(file name)';

/** The kinds of ids a recorded value may hold, each looked up in its table. */
export type RefKind = 'user' | 'image' | 'case' | 'study' | 'class' | 'reason' | 'role' | 'organization';
/** A value shown only to holders of a view permission (else HIDDEN_VALUE_LABEL). */
export type ViewKind = `view:${Permission}`;
/** What one value (or one member of a JSON value) is. */
export type ValueKind = RefKind | 'fileName' | 'storageKey' | 'readerText' | ViewKind;
/** A JSON object's members that need rendering; a member's kind may depend on the object. */
export type MemberRules = Readonly<Record<string, ValueKind | ((value: Record<string, unknown>) => ValueKind | null)>>;
/** A value's rule: the whole value is of a kind (ids may come as a JSON array of them), or a JSON object's members are. */
export type ValueRule = ValueKind | { members: MemberRules };

const view = (permission: Permission): ViewKind => `view:${permission}`;

/**
 * The image fields an edit records (Edit Image, Edit Column, the sample-data import: IMAGE_EDITED),
 * each by its Image Management column's view permission (doc 2 §6) — the file name by the
 * file-name rule instead (the neutral label, as everywhere). Edit Image calls the anatomical
 * segment `biopsyLocation` and the file name `imageName`.
 */
const IMAGE_FIELD_RULES: Readonly<Record<string, ValueRule>> = (() => {
  const rules: Record<string, ValueRule> = { imageName: 'fileName', imageFilename: 'fileName' };
  for (const column of IM_IMAGE_COLUMNS) {
    if (!column.edit || !column.view || column.key === 'imageFilename') continue;
    rules[column.key] = view(column.view);
    if (column.key === 'anatomicalSegment') rules.biopsyLocation = view(column.view);
  }
  return rules;
})();

/**
 * The case fields (CASE_EDITED, the members of CASE_CREATED) as the case views show them
 * (mayViewCaseField: subject, site and visit IDs by their permissions; the procedure IDs name the
 * case wherever it is shown), and the case table's other edited column (Images Expected) by its view
 * permission.
 */
const CASE_FIELD_RULES: Readonly<Record<string, ViewKind>> = (() => {
  const rules: Record<string, ViewKind> = {};
  for (const [field, permission] of Object.entries(CASE_FIELD_VIEW_PERMISSIONS))
    if (permission) rules[field] = view(permission);
  for (const column of IM_CASE_COLUMNS)
    if (column.edit && column.view && !(CASE_FIELDS as readonly string[]).includes(column.key))
      rules[column.key] = view(column.view);
  return rules;
})();

/** `*` stands for any field (and none); `''` for events without a field. */
export const AUDIT_VALUE_RULES: Readonly<Record<string, Readonly<Record<string, ValueRule>>>> = {
  IMAGE_UPLOADED: { '': { members: { name: 'fileName' } } },
  IMAGE_ORIGINAL_SEALED: { s3_key: 'storageKey' },
  IMAGE_EDITED: IMAGE_FIELD_RULES,
  IMAGE_COPIED: { copied_from_image_id: { members: { copiedFrom: 'image', name: 'fileName' } } },
  IMAGE_DOWNLOADED: { '': 'fileName' },
  IMAGE_REPLACED: { replaces_image_id: 'image' },
  IMAGE_CASE_ASSIGNED: { case_id: 'case' },
  IMAGE_CASE_REMOVED: { case_id: 'case' },
  IMAGE_MOVED_STUDY: { study_id: 'study' },
  IMAGE_STUDY_MATCHED: { study_id: 'study' },
  CASE_CREATED: { '': { members: CASE_FIELD_RULES } },
  CASE_EDITED: CASE_FIELD_RULES,
  CASE_READERS_CHANGED: { readers: 'user' },
  CASE_ADJUDICATOR_CHANGED: { adjudicator: 'user' },
  CASE_IMAGES_CHANGED: { images: 'image' },
  CASE_READ_REOPENED: { read_at: 'readerText' },
  // A reader's endpoint values (issue 30): only for those who may see read outcomes; the reader's
  // username stays, as in CASE_READ_MARKED.
  READ_OUTCOMES_FROZEN: { outcomes: { members: { values: view(READ_OUTCOMES_PERMISSION) } } },
  READ_OUTCOMES_CLEARED: { outcomes: { members: { values: view(READ_OUTCOMES_PERMISSION) } } },
  CASE_COMMENTED: { comment: { members: { imageId: 'image' } } },
  ANNOTATION_CREATED: { '': { members: { imageId: 'image', annotationClassId: 'class' } } },
  MLD_UPLOADED: { '': { members: { imageId: 'image' } } },
  MLD_IMPORTED: { '': { members: { imageId: 'image' } } },
  QUERY_OPENED: {
    '': {
      members: {
        objectId: (q) => (q.objectType === 'IMAGE' ? 'image' : q.objectType === 'CASE' ? 'case' : null),
        caseId: 'case',
        withRoleId: 'role',
        withUserId: 'user',
      },
    },
  },
  QUERY_IMAGE_REPLACED: { objectId: 'image' },
  QUERY_REASON_CREATED: { '': { members: { withRoleId: 'role', parentId: 'reason' } } },
  QUERY_REASON_CHANGED: { parentId: 'reason' },
  USER_CREATED: { organizationId: 'organization' },
  USER_UPDATED: { organizationId: 'organization' },
  REPORT_EXPORTED: { '*': { members: { userId: 'user' } } },
  STUDY_CREATED: { sponsor: view(VIEW_SPONSOR_PERMISSION) },
  STUDY_UPDATED: { sponsor: view(VIEW_SPONSOR_PERMISSION) },
};

/**
 * Actions whose reason is an error message rather than text a user typed: the worker's and the
 * .mld import's failures (processImage.ts markFailed, mldImport.ts failImport — a storage or
 * decoder error on the last attempt names the object it failed on, and the file). In an export
 * their storage keys read STORAGE_KEY_LABEL, and without AP_ImageData_ViewFilename their file
 * names read the neutral label. Every other reason is as recorded.
 */
export const AUDIT_ERROR_REASON_ACTIONS: readonly string[] = ['IMAGE_PROCESSING_FAILED', 'MLD_IMPORT_FAILED'];

/**
 * Actions whose values are shown as recorded: text, statuses, flags, counts, role names, usernames,
 * hashes, ids of things without a name (annotations, queries, comments, reminders, .mld files), a
 * study's configuration (its class lists carry their names). Key-like members are left out of any
 * JSON value all the same.
 */
export const AUDIT_PLAIN_ACTIONS: readonly string[] = [
  'ANNOTATION_DELETED',
  'ANNOTATION_POINTS_REPARENTED',
  'ANNOTATION_RESTORED',
  'ANNOTATIONS_IMPORTED',
  'AUDIT_TRAIL_EXPORTED',
  'CASE_ARCHIVED',
  'CASE_HOLD_REMOVED',
  'CASE_PUT_ON_HOLD',
  'CASE_READ_MARKED',
  'CASE_STATUS_FORWARDED',
  'CASE_STATUS_REVERTED',
  'IMAGE_AI_ACCEPTANCE_CHANGED',
  'IMAGE_ARCHIVED',
  'IMAGE_INTEGRITY_FAILED',
  'IMAGE_PROCESSED',
  'IMAGE_PROCESSING_FAILED',
  'IMAGE_QC_PASSED',
  'IMAGE_STATUS_CHANGED',
  'IMAGE_VISIBILITY_CHANGED',
  'INITIAL_PASSWORD_ISSUED',
  'LOGIN',
  'LOGIN_FAILED',
  'LOGIN_SSO',
  'LOGIN_THROTTLED',
  'LOGOUT',
  'MLD_IMPORT_ARCHIVED',
  'MLD_IMPORT_FAILED',
  'ORGANIZATION_CREATED',
  'PASSWORD_CHANGED',
  'PASSWORD_CHANGE_FAILED',
  'PASSWORD_CHANGE_THROTTLED',
  'QUERY_CANCELLED',
  'QUERY_CLOSED',
  'QUERY_COMMENTED',
  'QUERY_FOLLOW_UP',
  'QUERY_REASONS_SEEDED',
  'QUERY_REMINDER_SENT',
  'QUERY_RESOLVED',
  'QUERY_UNRESOLVABLE',
  'ROLE_GRANTED',
  'SAMPLE_DATA_IMPORTED',
  'SESSIONS_ENDED',
  // Electronic signatures (issue 30): the signer's printed name, time, meaning and hash are the record.
  'SIGNATURE_APPLIED',
  'SIGNATURE_FAILED',
  'SIGNATURE_REAUTHENTICATED',
  'SIGNATURE_REAUTH_FAILED',
  'SIGNATURE_THROTTLED',
  'STUDY_ACCESS_GRANTED',
  'STUDY_ACCESS_REVOKED',
  'UPLOAD_NOTIFIED',
  'USER_ACTIVATED',
  'USER_DEACTIVATED',
  'USER_REGISTERED',
  'WORK_AS_ROLE_CHANGED',
];

/** A member or field named like a storage key: `key`, `s3Key`, `heatmapKey`, `s3_key`, `cog_key` … */
const KEY_NAME = /^(?:key|.*Key|.*_key)$/;
/** The cheap test before parsing a value: could it hold a key-like member? */
const KEY_MEMBER_HINT = /(?:key|Key)"\s*:/;
/** An id a lookup can take (a PostgreSQL integer). */
const MAX_ID = 2_147_483_647;
/** Names kept across batches, per kind (users and classes repeat on every page); then dropped. */
const CACHE_LIMIT = 20_000;

/**
 * A word of an error message that is a slide's file name: it ends in an extension a slide is
 * uploaded with (IMAGE_EXTENSIONS), whatever folders come before it. The pyramid the worker builds
 * (`pyramid.tif`) is its own object, not a file name.
 */
const SLIDE_FILE_WORD = new RegExp(
  String.raw`[^\s"'\`()<>\[\]{},;|]*\.(?:${[...IMAGE_EXTENSIONS]
    .map((e) => e.slice(1))
    .sort((a, b) => b.length - a.length)
    .join('|')})(?![A-Za-z0-9])`,
  'gi',
);
const NOT_FILE_NAMES: ReadonlySet<string> = new Set(['pyramid.tif']);
/** The .mld import's messages whose end is the image name the file gave (mldImport.ts linkedImage). */
const MLD_NAME_MESSAGES = [MLD_IMPORT_MESSAGES.noImageMatches(''), MLD_IMPORT_MESSAGES.severalImagesMatch('')];
/** What mldImport.ts says when the file gave no image name: not a name. */
const NO_NAME_IN_FILE = '(no image name in the file)';

/** The fields of an audit row the renderer reads. */
export interface AuditValueRow {
  action: string;
  entity_type: string;
  entity_id: string | null;
  field: string | null;
  old_value: string | null;
  new_value: string | null;
  reason: string | null;
}

type Names = Record<RefKind, Map<number, string>>;
type Visit = (kind: ValueKind, value: unknown) => unknown;

const REF_KINDS: readonly RefKind[] = ['user', 'image', 'case', 'study', 'class', 'reason', 'role', 'organization'];
const isRef = (kind: ValueKind): kind is RefKind => (REF_KINDS as readonly string[]).includes(kind);
const isView = (kind: ValueRule | undefined): kind is ViewKind => typeof kind === 'string' && kind.startsWith('view:');
/** Kinds whose value is taken whole, as text (a view kind: whatever the value). */
const isWhole = (kind: ValueRule | undefined): kind is 'fileName' | 'storageKey' | 'readerText' | ViewKind =>
  kind === 'fileName' || kind === 'storageKey' || kind === 'readerText' || isView(kind);
const asId = (value: unknown): number | null =>
  typeof value === 'number' && Number.isInteger(value) && value > 0 && value <= MAX_ID ? value : null;

/** The rule for one value of a row, or undefined (then only key-like members are looked for). */
function ruleOf(row: AuditValueRow): ValueRule | undefined {
  const field = row.field ?? '';
  const rules = own(AUDIT_VALUE_RULES, row.action);
  return (rules && (own(rules, field) ?? own(rules, '*'))) ?? (KEY_NAME.test(field) ? 'storageKey' : undefined);
}

/** Whether a row's reason is an error message (rendered), not a user's text (as recorded). */
const isErrorReason = (row: AuditValueRow): boolean =>
  row.reason !== null && AUDIT_ERROR_REASON_ACTIONS.includes(row.action);

/** A table's own entry (never one of Object.prototype's: the names come from the rows). */
const own = <T>(table: Readonly<Record<string, T>>, name: string): T | undefined =>
  Object.hasOwn(table, name) ? table[name] : undefined;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A recorded value read for its rule: the text, and its JSON when the rule (or a key-like member) needs it. */
interface ReadValue {
  text: string | null;
  rule: ValueRule | undefined;
  /** The parsed JSON; undefined when the value is used as text (or is not JSON). */
  json: unknown;
  /** Whether key-like members may be in it. */
  keys: boolean;
}

function readValue(text: string | null, rule: ValueRule | undefined): ReadValue {
  if (text === null || isWhole(rule)) return { text, rule, json: undefined, keys: false };
  if (typeof rule === 'string' && /^\d+$/.test(text)) return { text, rule, json: Number(text), keys: false };
  const keys = KEY_MEMBER_HINT.test(text);
  const structured = keys || (typeof rule === 'string' ? text.startsWith('[') : rule !== undefined);
  return { text, rule, json: structured ? parseJson(text) : undefined, keys };
}

/**
 * One recorded value through its rule: `visit` gives each typed part its shown form (or the part
 * itself); key-like members are left out at any depth. Returns the text to show — the recorded text
 * itself when nothing changed.
 */
function walkValue({ text, rule, json, keys }: ReadValue, visit: Visit): string | null {
  // A field the exporter may not view is hidden even where it was empty (that it was is not shown).
  if (isView(rule)) {
    const shown = visit(rule, text);
    return shown === text ? text : String(shown);
  }
  if (text === null) return null;
  // Text kinds are the recorded text itself (strings are stored as they are).
  if (isWhole(rule)) return String(visit(rule, text));
  if (json === undefined) return text;
  if (typeof json === 'number' && typeof rule === 'string') {
    const shown = visit(rule, json);
    return shown === json ? text : String(shown);
  }
  let shown: unknown = json;
  if (typeof rule === 'string') shown = Array.isArray(json) ? walkIds(rule, json, visit) : json;
  else if (rule !== undefined && isObject(json)) shown = walkMembers(json, rule.members, visit);
  if (keys) shown = withoutKeys(shown);
  return shown === json ? text : JSON.stringify(shown);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The object's members through their rules; the same object when nothing changed. */
function walkMembers(object: Record<string, unknown>, members: MemberRules, visit: Visit): Record<string, unknown> {
  let out: Record<string, unknown> | null = null;
  for (const [name, value] of Object.entries(object)) {
    const member = own(members, name);
    const kind = typeof member === 'function' ? member(object) : member;
    if (kind === undefined || kind === null || (value === null && !isView(kind))) continue;
    const shown = isWhole(kind) ? visit(kind, value) : walkIds(kind, value, visit);
    if (shown !== value) {
      out ??= { ...object };
      out[name] = shown;
    }
  }
  return out ?? object;
}

/** An id, or an array of ids, through `visit`; anything else as it is. */
function walkIds(kind: ValueKind, value: unknown, visit: Visit): unknown {
  if (typeof value === 'number') return visit(kind, value);
  if (Array.isArray(value)) {
    const shown = value.map((v: unknown) => (typeof v === 'number' ? visit(kind, v) : v));
    return shown.some((v, i) => v !== value[i]) ? shown : value;
  }
  return value;
}

/** The value without its key-like members, at any depth; the same value when it has none. */
function withoutKeys(value: unknown): unknown {
  if (Array.isArray(value)) {
    const shown = value.map(withoutKeys);
    return shown.some((v, i) => v !== value[i]) ? shown : value;
  }
  if (!isObject(value)) return value;
  const entries = Object.entries(value);
  const kept = entries.filter(([name]) => !KEY_NAME.test(name)).map(([name, m]) => [name, withoutKeys(m)] as const);
  const same = kept.length === entries.length && kept.every(([name, m]) => m === value[name]);
  return same ? value : Object.fromEntries(kept);
}

/** The image an event is about, or null. */
function imageOf(row: AuditValueRow): number | null {
  return row.entity_type === 'image' && row.entity_id !== null && /^\d{1,10}$/.test(row.entity_id)
    ? asId(Number(row.entity_id))
    : null;
}

/** The neutral label of a file name: the image's, as the Object column gives it. */
function neutralFileName(row: AuditValueRow): string {
  const image = imageOf(row);
  return image !== null ? `Image ${image}` : FILE_NAME_LABEL;
}

const FALLBACK: Record<RefKind, string> = {
  user: 'User',
  image: 'Image',
  case: 'Case',
  study: 'Study',
  class: 'Class',
  reason: 'Reason',
  role: 'Role',
  organization: 'Organization',
};

/** A row's three rendered cells: Old Value, New Value, Reason for Change. */
type Rendered = [string | null, string | null, string | null];

/**
 * Renders the Old and New Value cells (and a failure's reason) of the rows of one export, as
 * `principal` may see them. `prepare(rows, db)` reads each value once, looks up the batch's names
 * (in the cursor's transaction) and renders the batch; `values(row)` and `reason(row)` then give a
 * row's cells. A row not prepared still loses its keys, its file names and the fields the exporter
 * may not view: its ids read as `User 12`, `Image 34` ….
 */
export class AuditValueRenderer {
  private readonly names: Names = {
    user: new Map(),
    image: new Map(),
    case: new Map(),
    study: new Map(),
    class: new Map(),
    reason: new Map(),
    role: new Map(),
    organization: new Map(),
  };
  /**
   * The file names of images whose failures are rendered for an exporter without the file-name
   * permission: the image's name, that name as its storage key has it, and its key's file (the
   * name it was uploaded with), to find in an error message.
   */
  private readonly fileNames = new Map<number, string[]>();
  /** The cells of the batch prepared last that needed rendering (the others are as recorded). */
  private readonly rendered = new Map<AuditValueRow, Rendered>();
  /** The exporter's permissions: which fields they may view. */
  private readonly actions: ReadonlySet<string>;

  constructor(
    private readonly viewer: {
      /** AP_ImageData_ViewFilename: file names, else `Image {id}`. */
      fileNames: boolean;
      /** Whose study scope decides which study names show, and whose permissions which fields. */
      principal: Principal;
    },
  ) {
    this.actions = viewer.principal.actions;
  }

  /** Looks up the names the rows' values refer to that are not known yet (one query per kind), and renders the rows. */
  async prepare(rows: readonly AuditValueRow[], db: Kysely<DB>): Promise<void> {
    this.rendered.clear();
    for (const map of Object.values(this.names)) if (map.size > CACHE_LIMIT) map.clear();
    if (this.fileNames.size > CACHE_LIMIT) this.fileNames.clear();
    const wanted = new Map<RefKind, Set<number>>();
    const wantedFiles = new Set<number>();
    const want = (kind: RefKind, id: number) => {
      if (this.names[kind].has(id) || (kind === 'image' && !this.viewer.fileNames)) return; // a label needs no look-up
      let set = wanted.get(kind);
      if (!set) wanted.set(kind, (set = new Set()));
      set.add(id);
    };
    const collect: Visit = (kind, value) => {
      const id = asId(value);
      if (id !== null && isRef(kind)) want(kind, id);
      else if (kind === 'readerText' && typeof value === 'string') {
        const reader = /^reader (\d+)$/.exec(value);
        const readerId = reader ? asId(Number(reader[1])) : null;
        if (readerId !== null) want('user', readerId);
      }
      return value;
    };
    const read: [AuditValueRow, ReadValue, ReadValue][] = [];
    for (const row of rows) {
      const rule = ruleOf(row);
      const before = readValue(row.old_value, rule);
      const after = readValue(row.new_value, rule);
      const errorReason = isErrorReason(row);
      if (rule === undefined && before.json === undefined && after.json === undefined && !errorReason) continue; // as recorded
      walkValue(before, collect);
      walkValue(after, collect);
      const image = imageOf(row);
      if (errorReason && !this.viewer.fileNames && image !== null && !this.fileNames.has(image)) wantedFiles.add(image);
      read.push([row, before, after]);
    }
    for (const [kind, set] of wanted) {
      const map = this.names[kind];
      const found = await this.lookUp(db, kind, [...set]);
      for (const id of set) map.set(id, found.get(id) ?? `${FALLBACK[kind]} ${id}`);
    }
    if (wantedFiles.size > 0) {
      const images = await db
        .selectFrom('images')
        .select(['id', 'name', 's3_key'])
        .where('id', 'in', [...wantedFiles])
        .execute();
      for (const id of wantedFiles) this.fileNames.set(id, []);
      for (const image of images) {
        const names = [image.name, safeFileName(image.name), image.s3_key.split('/').pop() ?? ''];
        // Longest first (a name may hold another); names shorter than 'a.svs' are not looked for.
        const distinct = [...new Set(names)].filter((n) => n.length >= 5).sort((a, b) => b.length - a.length);
        this.fileNames.set(image.id, distinct);
      }
    }
    for (const [row, before, after] of read) {
      const visit: Visit = (kind, value) => this.show(row, kind, value);
      this.rendered.set(row, [walkValue(before, visit), walkValue(after, visit), this.renderReason(row)]);
    }
  }

  /** The Old Value and New Value cells of a row (of the batch prepared last, or any row: then without look-ups). */
  values(row: AuditValueRow): [string | null, string | null] {
    const known = this.rendered.get(row);
    if (known) return [known[0], known[1]];
    const rule = ruleOf(row);
    const visit: Visit = (kind, value) => this.show(row, kind, value);
    return [walkValue(readValue(row.old_value, rule), visit), walkValue(readValue(row.new_value, rule), visit)];
  }

  /** The Reason for Change cell: as recorded, but for a failure's error message (AUDIT_ERROR_REASON_ACTIONS). */
  reason(row: AuditValueRow): string | null {
    const known = this.rendered.get(row);
    return known ? known[2] : this.renderReason(row);
  }

  private renderReason(row: AuditValueRow): string | null {
    if (row.reason === null || !isErrorReason(row)) return row.reason;
    const text = withoutStorageKeys(row.reason, STORAGE_KEY_LABEL);
    return this.viewer.fileNames ? text : this.withoutFileNames(row, text);
  }

  /** An error message without the file names it holds: the image's (looked up), any slide's, an .mld's image's. */
  private withoutFileNames(row: AuditValueRow, text: string): string {
    const label = neutralFileName(row);
    const image = imageOf(row);
    let shown = text;
    for (const name of (image !== null ? this.fileNames.get(image) : undefined) ?? [])
      shown = shown.split(name).join(label);
    shown = shown.replace(SLIDE_FILE_WORD, (word) => (NOT_FILE_NAMES.has(word.toLowerCase()) ? word : label));
    for (const message of MLD_NAME_MESSAGES)
      if (shown.startsWith(message) && shown.slice(message.length) !== NO_NAME_IN_FILE) return `${message}${label}`;
    return shown;
  }

  private show(row: AuditValueRow, kind: ValueKind, value: unknown): unknown {
    if (isView(kind)) return this.actions.has(kind.slice('view:'.length)) ? value : HIDDEN_VALUE_LABEL;
    switch (kind) {
      case 'storageKey':
        return STORAGE_KEY_LABEL;
      case 'fileName':
        return typeof value === 'string' && !this.viewer.fileNames ? neutralFileName(row) : value;
      case 'readerText': {
        const reader = typeof value === 'string' ? /^reader (\d+)$/.exec(value) : null;
        return reader ? `reader ${this.nameOf('user', Number(reader[1]))}` : value;
      }
      default: {
        const id = asId(value);
        if (id === null) return value;
        if (kind === 'image' && !this.viewer.fileNames) return `Image ${id}`;
        return this.nameOf(kind, id);
      }
    }
  }

  private nameOf(kind: RefKind, id: number): string {
    return this.names[kind].get(id) ?? `${FALLBACK[kind]} ${id}`;
  }

  private async lookUp(db: Kysely<DB>, kind: RefKind, ids: number[]): Promise<Map<number, string>> {
    const pairs = async (rows: Promise<{ id: number; name: string | null }[]>) =>
      new Map((await rows).flatMap((r) => (r.name === null || r.name === '' ? [] : [[r.id, r.name] as const])));
    switch (kind) {
      case 'user': {
        const rows = await db
          .selectFrom('users')
          .select(['id', 'username', 'first_name', 'last_name'])
          .where('id', 'in', ids)
          .execute();
        return new Map(
          rows.map((u) => {
            const name = [u.first_name, u.last_name].filter(Boolean).join(' ');
            return [u.id, name ? `${name} (${u.username})` : u.username];
          }),
        );
      }
      case 'image':
        return pairs(db.selectFrom('images').select(['id', 'name']).where('id', 'in', ids).execute());
      case 'case':
        return pairs(db.selectFrom('cases').select(['id', 'proc_id as name']).where('id', 'in', ids).execute());
      case 'study':
        return pairs(
          db
            .selectFrom('studies')
            .select(['studies.id', 'studies.name'])
            .where('studies.id', 'in', ids)
            .where(visibleStudies(this.viewer.principal))
            .execute(),
        );
      case 'class':
        return pairs(db.selectFrom('annotation_classes').select(['id', 'name']).where('id', 'in', ids).execute());
      case 'reason':
        return pairs(
          db.selectFrom('query_reasons').select(['id', 'reason_text as name']).where('id', 'in', ids).execute(),
        );
      case 'role':
        return pairs(db.selectFrom('roles').select(['id', 'display_name as name']).where('id', 'in', ids).execute());
      case 'organization':
        return pairs(db.selectFrom('organizations').select(['id', 'name']).where('id', 'in', ids).execute());
    }
  }
}
