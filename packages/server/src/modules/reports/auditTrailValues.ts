import type { Kysely } from 'kysely';
import type { DB } from '../../platform/db/schema.js';
import type { Principal } from '../../platform/auth/principal.js';
import { visibleStudies } from '../../platform/rbac/studyScope.js';

/**
 * The Old and New Value cells of the audit trail exports (issue 26, items 5 and 6). The audit rows
 * keep what was recorded — storage keys, scanner file names, ids; an export shows an inspector what
 * they mean, and no more than the exporter may see:
 *
 * - **storage keys** never: a JSON value's key-like members (`s3Key`, `heatmapKey`, `key` …) are
 *   left out, a value that is a key (field `s3_key` …) reads STORAGE_KEY_LABEL;
 * - **file names** only with AP_ImageData_ViewFilename, else the Object column's neutral
 *   `Image {id}`;
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

/** The kinds of ids a recorded value may hold, each looked up in its table. */
export type RefKind = 'user' | 'image' | 'case' | 'study' | 'class' | 'reason' | 'role' | 'organization';
/** What one value (or one member of a JSON value) is. */
export type ValueKind = RefKind | 'fileName' | 'storageKey' | 'readerText';
/** A JSON object's members that need rendering; a member's kind may depend on the object. */
export type MemberRules = Readonly<Record<string, ValueKind | ((value: Record<string, unknown>) => ValueKind | null)>>;
/** A value's rule: the whole value is of a kind (ids may come as a JSON array of them), or a JSON object's members are. */
export type ValueRule = ValueKind | { members: MemberRules };

/** `*` stands for any field (and none); `''` for events without a field. */
export const AUDIT_VALUE_RULES: Readonly<Record<string, Readonly<Record<string, ValueRule>>>> = {
  IMAGE_UPLOADED: { '': { members: { name: 'fileName' } } },
  IMAGE_ORIGINAL_SEALED: { s3_key: 'storageKey' },
  IMAGE_EDITED: { imageName: 'fileName', imageFilename: 'fileName' },
  IMAGE_COPIED: { copied_from_image_id: { members: { copiedFrom: 'image', name: 'fileName' } } },
  IMAGE_DOWNLOADED: { '': 'fileName' },
  IMAGE_REPLACED: { replaces_image_id: 'image' },
  IMAGE_CASE_ASSIGNED: { case_id: 'case' },
  IMAGE_CASE_REMOVED: { case_id: 'case' },
  IMAGE_MOVED_STUDY: { study_id: 'study' },
  IMAGE_STUDY_MATCHED: { study_id: 'study' },
  CASE_READERS_CHANGED: { readers: 'user' },
  CASE_IMAGES_CHANGED: { images: 'image' },
  CASE_READ_REOPENED: { read_at: 'readerText' },
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
};

/**
 * Actions whose values are shown as recorded: text, statuses, flags, counts, role names, usernames,
 * hashes, ids of things without a name (annotations, queries, comments, reminders, .mld files), a
 * study's configuration (its class lists carry their names). Key-like members are left out of any
 * JSON value all the same.
 */
export const AUDIT_PLAIN_ACTIONS: readonly string[] = [
  'ANNOTATION_DELETED',
  'ANNOTATION_POINTS_REPARENTED',
  'ANNOTATIONS_IMPORTED',
  'AUDIT_TRAIL_EXPORTED',
  'CASE_ARCHIVED',
  'CASE_CREATED',
  'CASE_EDITED',
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
  'STUDY_ACCESS_GRANTED',
  'STUDY_ACCESS_REVOKED',
  'STUDY_CREATED',
  'STUDY_UPDATED',
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

/** The fields of an audit row the renderer reads. */
export interface AuditValueRow {
  action: string;
  entity_type: string;
  entity_id: string | null;
  field: string | null;
  old_value: string | null;
  new_value: string | null;
}

type Names = Record<RefKind, Map<number, string>>;
type Visit = (kind: ValueKind, value: unknown) => unknown;

const REF_KINDS: readonly RefKind[] = ['user', 'image', 'case', 'study', 'class', 'reason', 'role', 'organization'];
const isRef = (kind: ValueKind): kind is RefKind => (REF_KINDS as readonly string[]).includes(kind);
const asId = (value: unknown): number | null =>
  typeof value === 'number' && Number.isInteger(value) && value > 0 && value <= MAX_ID ? value : null;

/** The rule for one value of a row, or undefined (then only key-like members are looked for). */
function ruleOf(row: AuditValueRow): ValueRule | undefined {
  const field = row.field ?? '';
  const rules = own(AUDIT_VALUE_RULES, row.action);
  return (rules && (own(rules, field) ?? own(rules, '*'))) ?? (KEY_NAME.test(field) ? 'storageKey' : undefined);
}

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
  if (text === null || rule === 'fileName' || rule === 'storageKey' || rule === 'readerText')
    return { text, rule, json: undefined, keys: false };
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
  if (text === null) return null;
  // Text kinds are the recorded text itself (strings are stored as they are).
  if (rule === 'fileName' || rule === 'storageKey' || rule === 'readerText') return String(visit(rule, text));
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
    if (kind === undefined || kind === null || value === null) continue;
    const shown =
      kind === 'fileName' || kind === 'storageKey' || kind === 'readerText'
        ? visit(kind, value)
        : walkIds(kind, value, visit);
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

/** The neutral label of a file name: the image's, as the Object column gives it. */
function neutralFileName(row: AuditValueRow): string {
  return row.entity_type === 'image' && row.entity_id !== null && /^\d+$/.test(row.entity_id)
    ? `Image ${row.entity_id}`
    : '(file name)';
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

/**
 * Renders the Old and New Value cells of the rows of one export, as `principal` may see them.
 * `prepare(rows, db)` reads each value once, looks up the batch's names (in the cursor's
 * transaction) and renders the batch; `values(row)` then gives a row's two cells. A row not
 * prepared still loses its keys and file names: its ids read as `User 12`, `Image 34` ….
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
  /** The cells of the batch prepared last that needed rendering (the others are as recorded). */
  private readonly rendered = new Map<AuditValueRow, [string | null, string | null]>();

  constructor(
    private readonly viewer: {
      /** AP_ImageData_ViewFilename: file names, else `Image {id}`. */
      fileNames: boolean;
      /** Whose study scope decides which study names show. */
      principal: Principal;
    },
  ) {}

  /** Looks up the names the rows' values refer to that are not known yet (one query per kind), and renders the rows. */
  async prepare(rows: readonly AuditValueRow[], db: Kysely<DB>): Promise<void> {
    this.rendered.clear();
    for (const map of Object.values(this.names)) if (map.size > CACHE_LIMIT) map.clear();
    const wanted = new Map<RefKind, Set<number>>();
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
      if (rule === undefined && before.json === undefined && after.json === undefined) continue; // as recorded
      walkValue(before, collect);
      walkValue(after, collect);
      read.push([row, before, after]);
    }
    for (const [kind, set] of wanted) {
      const map = this.names[kind];
      const found = await this.lookUp(db, kind, [...set]);
      for (const id of set) map.set(id, found.get(id) ?? `${FALLBACK[kind]} ${id}`);
    }
    for (const [row, before, after] of read) {
      const visit: Visit = (kind, value) => this.show(row, kind, value);
      this.rendered.set(row, [walkValue(before, visit), walkValue(after, visit)]);
    }
  }

  /** The Old Value and New Value cells of a row (of the batch prepared last, or any row: then without look-ups). */
  values(row: AuditValueRow): [string | null, string | null] {
    const known = this.rendered.get(row);
    if (known) return known;
    const rule = ruleOf(row);
    const visit: Visit = (kind, value) => this.show(row, kind, value);
    return [walkValue(readValue(row.old_value, rule), visit), walkValue(readValue(row.new_value, rule), visit)];
  }

  private show(row: AuditValueRow, kind: ValueKind, value: unknown): unknown {
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
