import type { ColumnType, Generated, GeneratedAlways } from 'kysely';

/** Table types of the database, kept beside the SQL migrations in ../../../migrations. */
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface OrganizationsTable {
  id: Generated<number>;
  name: string;
  group_email: string | null;
  created_at: Timestamp;
}

export interface RolesTable {
  id: number;
  name: string;
  display_name: string;
  description: string;
  role_type: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PermissionsTable {
  name: string;
  area: string;
  description: string;
}

export interface RolePermissionsTable {
  role_id: number;
  permission: string;
}

export interface UsersTable {
  id: Generated<number>;
  username: string;
  first_name: string | null;
  last_name: string | null;
  organization_id: number | null;
  registered: Generated<boolean>;
  is_system_admin: Generated<boolean>;
  active: Generated<boolean>;
  password_hash: string | null;
  work_as_role_id: number | null;
  last_login_at: Date | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** 0003: set for an account created with a one-time initial password. */
  must_change_password: Generated<boolean>;
  /** 0007: bumped when the user loses access; tile tokens of an older generation stop working. */
  access_generation: Generated<number>;
}

export interface UserRolesTable {
  user_id: number;
  role_id: number;
}

type TextArray = ColumnType<string[], string[] | undefined, string[]>;

export interface StudiesTable {
  id: Generated<number>;
  name: string;
  sponsor: string | null;
  on_hold: Generated<boolean>;
  on_hold_reason: string | null;
  is_noto: Generated<boolean>;
  protocol_ids: TextArray;
  visit_ids: TextArray;
  lab_visit_ids: TextArray;
  indications: TextArray;
  segments: Generated<number>;
  anatomical_segments: TextArray;
  modality: TextArray;
  created_by: number | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AnnotationClassesTable {
  id: Generated<number>;
  study_id: number;
  type: 'HPF' | 'POINT' | 'FREEHAND' | 'MULTILINE';
  name: string;
  color: string;
  sort_order: Generated<number>;
  enabled: Generated<boolean>;
  deleted: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface CasesTable {
  id: Generated<number>;
  study_id: number;
  proc_id: string | null;
  histo_procedure_id: string | null;
  subject_id: string | null;
  site_id: string | null;
  visit_id: string | null;
  status: Generated<string>;
  prev_workflow_statuses: TextArray;
  images_expected: number | null;
  specimen_collection_date: string | null;
  qc1_by: number | null;
  qc2_by: number | null;
  read_by: number | null;
  qc_completed_at: Date | null;
  read_completed_at: Date | null;
  created_by: number | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  on_hold_from: string | null;
  case_status_reverted: Generated<boolean>;
  /** 0013: open queries naming the case (its own and its images'), kept by a trigger on queries. */
  open_queries: Generated<number>;
  archived_at: Date | null;
}

export interface CaseCommentsTable {
  id: Generated<number>;
  case_id: number;
  image_id: number | null;
  user_id: number | null;
  comment: string;
  /** Written by a blinded reader (0019): shown to its author and to roles that are not blinded. */
  by_reader: Generated<boolean>;
  created_at: Timestamp;
}

export interface CaseReadersTable {
  case_id: number;
  user_id: number;
  assigned_at: Timestamp;
  read_at: Date | null;
  /** The reader's choice at Mark as Scored to include imported AI counts (0019); null: not asked. */
  include_ai_counts: Generated<boolean | null>;
}

export interface ImagesTable {
  id: Generated<number>;
  study_id: number | null;
  case_id: number | null;
  name: string;
  s3_key: string;
  cog_key: string | null;
  uploader_id: number | null;
  organization_id: number | null;
  uploaded_at: Timestamp;
  status: Generated<string>;
  processing_status: Generated<string>;
  status_message: string | null;
  accession_number: string | null;
  biopsy_location: string | null;
  protocol_id: string | null;
  site_id: string | null;
  subject_id: string | null;
  visit_id: string | null;
  lab_visit_id: string | null;
  specimen_collection_date: string | null;
  lab_image_created_at: Date | null;
  lab_image_id: string | null;
  machine_readable_barcode: string | null;
  stain_type: string | null;
  qa_comments: string | null;
  accept_ai_annotations: Generated<boolean>;
  ignored: Generated<boolean>;
  content_sha256: string | null;
  size_bytes: number | null;
  /** Storage version (head) of the original when content_sha256 was computed. */
  original_version: string | null;
  pyramid_sha256: string | null;
  width: number | null;
  height: number | null;
  levels: number | null;
  mpp: number | null;
  objective_power: number | null;
  z_stack_size: Generated<number>;
  replaces_image_id: number | null;
  copied_from_image_id: number | null;
  is_study_matched: Generated<boolean>;
  is_case_matched: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** 0004 (slide pipeline): progress 0–100 of the processing job, attempts, derived objects. */
  processing_progress: Generated<number>;
  processing_attempts: Generated<number>;
  processing_started_at: Date | null;
  processed_at: Date | null;
  label_key: string | null;
  macro_key: string | null;
  source_format: string | null;
  source_compression: number | null;
  /**
   * 0015: the values of another table the Image Management list sorts by, kept by triggers (set
   * by the database on every write: never written by the application).
   */
  sort_sponsor: Generated<string | null>;
  sort_study_name: Generated<string | null>;
  sort_organization: Generated<string | null>;
  sort_site_id: Generated<string | null>;
  sort_subject_id: Generated<string | null>;
  sort_visit_id: Generated<string | null>;
  sort_histo_procedure_id: Generated<string | null>;
  sort_proc_id: Generated<string | null>;
  sort_collection_date: Generated<string | null>;
}

export interface AnnotationsTable {
  id: Generated<number>;
  image_id: number;
  annotation_type: string;
  annotation_class_id: number | null;
  parent_id: number | null;
  source: Generated<string>;
  geometry: ColumnType<unknown, string, string>;
  text: string | null;
  color: string | null;
  radius: number | null;
  radius_x: number | null;
  radius_y: number | null;
  tilt: number | null;
  weight: number | null;
  length: number | null;
  multiline_category: string | null;
  user_id: number | null;
  status: Generated<string>;
  created_at: Timestamp;
  deleted_at: Date | null;
  deleted_by: number | null;
  /** 0017: an imported (AI) annotation's file and AI class. */
  mld_file_id: number | null;
  ai_class_id: number | null;
  /** Generated (migration 0014): the centre of a Point geometry. */
  x: GeneratedAlways<number | null>;
  y: GeneratedAlways<number | null>;
}

export interface QueriesTable {
  id: Generated<number>;
  object_type: 'CASE' | 'IMAGE';
  object_id: number;
  study_id: number;
  case_id: number | null;
  organization_id: number | null;
  assessment_type: string | null;
  query_status: Generated<'OPEN' | 'CLOSED'>;
  resolution: 'RESOLVED' | 'UNRESOLVABLE' | null;
  category: Generated<string>;
  category_other_text: string | null;
  reason_text: string | null;
  child_reason_text: string | null;
  reason_option_id: number | null;
  child_reason_option_id: number | null;
  close_text: string | null;
  resolution_text: string | null;
  resolution_option: string | null;
  /** A date: YYYY-MM-DD. */
  latest_follow_up_on: string | null;
  opened_at: Timestamp;
  opened_by: number | null;
  opened_by_role_id: number | null;
  with_role_id: number | null;
  /** A query sent to a reading role names its reader (0019): only they see and answer it. */
  with_user_id: number | null;
  resolved_by: number | null;
  resolved_at: Date | null;
  closed_at: Date | null;
  closed_by: number | null;
  updated_at: Timestamp;
  first_reminder_id: number | null;
  last_reminder_id: number | null;
}

export interface QueryReasonsTable {
  id: Generated<number>;
  object_type: 'CASE' | 'IMAGE';
  with_role_id: number;
  parent_id: number | null;
  reason_text: string;
  active: Generated<boolean>;
  sort_order: Generated<number>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface QueryCommentsTable {
  id: Generated<number>;
  query_id: number;
  comment_text: string;
  comment_by: number;
  created_at: Timestamp;
}

export interface QueryRemindersTable {
  id: Generated<number>;
  query_id: number;
  /** A date: YYYY-MM-DD (the pg and PGlite drivers are set to return dates as text). */
  follow_up_on: string;
  reminded_on: Date | null;
  reminded_by: number | null;
  created_at: Timestamp;
}

/** 0017: imported .mld files (docs/MLD.md). */
export interface MldFilesTable {
  id: Generated<number>;
  name: string;
  s3_key: string;
  size_bytes: number;
  app_sequence_id: string | null;
  image_id: number | null;
  study_id: number | null;
  uploader_id: number | null;
  uploaded_at: Timestamp;
  status: Generated<'UPLOADED' | 'QUEUED' | 'PROCESSING' | 'COMPLETE' | 'ERROR' | 'ARCHIVED'>;
  error_message: string | null;
  num_layers: number | null;
  counts: ColumnType<
    { hpfs: number; points: number; regions: number; lines: number } | null,
    string | null,
    string | null
  >;
  heatmap_key: string | null;
  heatmap_name: string | null;
  completed_at: Date | null;
  updated_at: Timestamp;
}

/** 0017: the AI classes of a study (from imported files), apart from the readers' classes. */
export interface AiClassesTable {
  id: Generated<number>;
  study_id: number;
  name: string;
  color: string | null;
  created_at: Timestamp;
}

export interface StudyAccessTable {
  user_id: number;
  study_id: number;
  role_id: number;
  created_at: Timestamp;
}

export interface SessionsTable {
  id: string;
  user_id: number;
  csrf_token: string;
  created_at: Timestamp;
  last_seen_at: Timestamp;
  expires_at: Date;
  ended_at: Date | null;
  /** 0018: how the session was opened. */
  auth_method: Generated<'password' | 'oidc'>;
  /** 0018: an OpenID Connect session's ID token (the id_token_hint of the logout at the provider). */
  id_token: string | null;
}

export interface LoginFailuresTable {
  id: Generated<number>;
  username: string;
  ip: string;
  occurred_at: Timestamp;
}

export interface AuditEventsTable {
  id: number;
  occurred_at: Date;
  user_id: number | null;
  username: string | null;
  work_as_role: string | null;
  action: string;
  entity_type: string;
  entity_id: string | null;
  study_id: number | null;
  field: string | null;
  old_value: string | null;
  new_value: string | null;
  reason: string | null;
  request_id: string | null;
  client_ip: string | null;
  prev_hash: string;
  hash: string;
}

/** 0010: sample-data imports (docs/SAMPLE-DATA.md). */
export interface SampleImportsTable {
  id: Generated<number>;
  user_id: number;
  sample_key: string;
  result_key: string;
  file_name: string;
  status: Generated<'PROCESSING' | 'COMPLETE' | 'FAILED'>;
  total_rows: Generated<number>;
  done_rows: Generated<number>;
  rows_updated: Generated<number>;
  fields_updated: Generated<number>;
  rows_failed: Generated<number>;
  message: string | null;
  created_at: Generated<Date>;
  finished_at: Date | null;
}

/** 0004: notifications waiting for (or done with) SMTP delivery. */
export interface MailOutboxTable {
  id: Generated<number>;
  kind: string;
  study_id: number | null;
  user_id: number | null;
  to_address: string;
  subject: string;
  body: string;
  status: Generated<'PENDING' | 'SENT' | 'FAILED' | 'NOT_CONFIGURED'>;
  attempts: Generated<number>;
  last_error: string | null;
  created_by: number | null;
  created_at: Timestamp;
  sent_at: Date | null;
}

export interface SchemaMigrationsTable {
  name: string;
  applied_at: Timestamp;
}

/** A running job's heartbeat (platform/jobs/jobQueue.ts). */
export interface JobHeartbeatsTable {
  job_id: string;
  queue: string;
  worker: string;
  started_at: Generated<Date>;
  beat_at: Generated<Date>;
}

export interface DB {
  case_comments: CaseCommentsTable;
  organizations: OrganizationsTable;
  roles: RolesTable;
  permissions: PermissionsTable;
  role_permissions: RolePermissionsTable;
  users: UsersTable;
  user_roles: UserRolesTable;
  studies: StudiesTable;
  annotation_classes: AnnotationClassesTable;
  cases: CasesTable;
  case_readers: CaseReadersTable;
  images: ImagesTable;
  annotations: AnnotationsTable;
  queries: QueriesTable;
  query_reasons: QueryReasonsTable;
  query_comments: QueryCommentsTable;
  query_reminders: QueryRemindersTable;
  mld_files: MldFilesTable;
  ai_classes: AiClassesTable;
  study_access: StudyAccessTable;
  sessions: SessionsTable;
  login_failures: LoginFailuresTable;
  audit_events: AuditEventsTable;
  schema_migrations: SchemaMigrationsTable;
  mail_outbox: MailOutboxTable;
  job_heartbeats: JobHeartbeatsTable;
  sample_imports: SampleImportsTable;
}
