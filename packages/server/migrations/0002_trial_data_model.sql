-- The trial data model shared by the studies, slide pipeline, cases, annotations and queries work:
-- study configuration, annotation classes, images, cases, reader assignments, annotations, queries.
-- Later migrations add what each area needs beyond these columns.

-- Study configuration (spec doc 1 §2.6, §3). Lists keep their order: visit_ids[i] pairs with lab_visit_ids[i].
ALTER TABLE studies
  ADD COLUMN protocol_ids        text[]  NOT NULL DEFAULT '{}',
  ADD COLUMN visit_ids           text[]  NOT NULL DEFAULT '{}',
  ADD COLUMN lab_visit_ids       text[]  NOT NULL DEFAULT '{}',
  ADD COLUMN indications         text[]  NOT NULL DEFAULT '{}',
  ADD COLUMN segments            integer NOT NULL DEFAULT 1 CHECK (segments >= 1),
  ADD COLUMN anatomical_segments text[]  NOT NULL DEFAULT '{}',
  ADD COLUMN modality            text[]  NOT NULL DEFAULT '{}',
  ADD COLUMN created_by          integer REFERENCES users (id),
  ADD CONSTRAINT studies_on_hold_reason_length CHECK (on_hold_reason IS NULL OR char_length(on_hold_reason) <= 178);
CREATE UNIQUE INDEX studies_name_lower ON studies (lower(name));

CREATE TABLE annotation_classes (
  id          serial PRIMARY KEY,
  study_id    integer NOT NULL REFERENCES studies (id),
  type        text    NOT NULL CHECK (type IN ('HPF', 'POINT', 'FREEHAND', 'MULTILINE')),
  name        text    NOT NULL,
  color       text    NOT NULL,
  sort_order  integer NOT NULL DEFAULT 0,
  enabled     boolean NOT NULL DEFAULT true,
  deleted     boolean NOT NULL DEFAULT false,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX annotation_classes_study ON annotation_classes (study_id, type, sort_order);
-- Names are unique among the live classes of one list.
CREATE UNIQUE INDEX annotation_classes_live_name ON annotation_classes (study_id, type, lower(name)) WHERE NOT deleted;

CREATE TABLE cases (
  id                        serial PRIMARY KEY,
  study_id                  integer NOT NULL REFERENCES studies (id),
  proc_id                   text,            -- Endo Procedure ID
  histo_procedure_id        text,
  subject_id                text,
  site_id                   text,
  visit_id                  text,
  status                    text NOT NULL DEFAULT 'PENDING_LAB_QC'
                            CHECK (status IN ('PENDING_LAB_QC', 'PENDING_QC', 'PROCESSED', 'COMPLETED', 'ON_HOLD', 'INVALID', 'ARCHIVED')),
  prev_workflow_statuses    text[] NOT NULL DEFAULT '{}',
  images_expected           integer,
  specimen_collection_date  date,
  qc1_by                    integer REFERENCES users (id),
  qc2_by                    integer REFERENCES users (id),
  read_by                   integer REFERENCES users (id),
  qc_completed_at           timestamptz,
  read_completed_at         timestamptz,
  created_by                integer REFERENCES users (id),
  created_at                timestamptz NOT NULL DEFAULT now(),
  updated_at                timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX cases_study ON cases (study_id, status);

-- Central readers assigned to a case; read_at is set when the reader marks the case scored.
CREATE TABLE case_readers (
  case_id     integer NOT NULL REFERENCES cases (id),
  user_id     integer NOT NULL REFERENCES users (id),
  assigned_at timestamptz NOT NULL DEFAULT now(),
  read_at     timestamptz,
  PRIMARY KEY (case_id, user_id)
);
CREATE INDEX case_readers_user ON case_readers (user_id);

CREATE TABLE images (
  id                        serial PRIMARY KEY,
  study_id                  integer REFERENCES studies (id),
  case_id                   integer REFERENCES cases (id),
  name                      text NOT NULL,
  s3_key                    text NOT NULL,
  cog_key                   text,
  uploader_id               integer REFERENCES users (id),
  organization_id           integer REFERENCES organizations (id),
  uploaded_at               timestamptz NOT NULL DEFAULT now(),
  status                    text NOT NULL DEFAULT 'PROCESSING'
                            CHECK (status IN ('PROCESSING', 'FAIL_PROCESSING', 'DATA_INCOMPLETE', 'STUDY_ASSIGNMENT_PENDING',
                                              'DUPLICATE_IMAGE', 'CASE_ASSIGNMENT_PENDING', 'LAB_QC_PENDING', 'ISC_QC_PENDING',
                                              'READY_FOR_READING', 'COMPLETE', 'ARCHIVED')),
  processing_status         text NOT NULL DEFAULT 'PENDING'
                            CHECK (processing_status IN ('HOLDING', 'PENDING', 'SUBMITTED', 'SUCCESS', 'FAIL')),
  status_message            text,
  accession_number          text,
  biopsy_location           text,            -- anatomical segment
  protocol_id               text,
  site_id                   text,
  subject_id                text,
  visit_id                  text,
  lab_visit_id              text,
  specimen_collection_date  date,
  lab_image_created_at      timestamptz,
  lab_image_id              text,
  machine_readable_barcode  text,
  stain_type                text,
  qa_comments               text,
  accept_ai_annotations     boolean NOT NULL DEFAULT false,
  ignored                   boolean NOT NULL DEFAULT false,   -- hidden from readers
  content_sha256            text,
  size_bytes                bigint,
  width                     integer,
  height                    integer,
  levels                    integer,
  mpp                       double precision,                 -- microns per pixel at full resolution
  objective_power           double precision,
  z_stack_size              integer NOT NULL DEFAULT 1,
  replaces_image_id         integer REFERENCES images (id),
  created_at                timestamptz NOT NULL DEFAULT now(),
  updated_at                timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX images_study ON images (study_id, uploaded_at DESC);
CREATE INDEX images_case ON images (case_id);
CREATE INDEX images_sha ON images (study_id, content_sha256);

CREATE TABLE annotations (
  id                  serial PRIMARY KEY,
  image_id            integer NOT NULL REFERENCES images (id),
  annotation_type     text NOT NULL CHECK (annotation_type IN ('LINE', 'MULTILINE', 'ELLIPSE', 'TEXT', 'HPF', 'POINT', 'FREEHAND')),
  annotation_class_id integer REFERENCES annotation_classes (id),
  parent_id           integer REFERENCES annotations (id),
  source              text NOT NULL DEFAULT 'CR' CHECK (source IN ('CR', 'VisioPharm')),
  geometry            jsonb NOT NULL,
  text                text,
  color               text,
  radius              double precision,
  radius_x            double precision,
  radius_y            double precision,
  tilt                double precision,
  weight              double precision,
  length              double precision,
  multiline_category  text CHECK (multiline_category IN ('VILLUS_HEIGHT', 'CRYPT_DEPTH')),
  user_id             integer REFERENCES users (id),
  status              text NOT NULL DEFAULT 'ACTIVE',
  created_at          timestamptz NOT NULL DEFAULT now(),
  deleted_at          timestamptz
);
CREATE INDEX annotations_image ON annotations (image_id);
CREATE INDEX annotations_class ON annotations (annotation_class_id) WHERE deleted_at IS NULL;

CREATE TABLE queries (
  id                      serial PRIMARY KEY,
  object_type             text NOT NULL CHECK (object_type IN ('CASE', 'IMAGE')),
  object_id               integer NOT NULL,
  study_id                integer NOT NULL REFERENCES studies (id),
  case_id                 integer REFERENCES cases (id),
  organization_id         integer REFERENCES organizations (id),
  assessment_type         text CHECK (assessment_type IN ('PRE', 'POST')),
  query_status            text NOT NULL DEFAULT 'OPEN' CHECK (query_status IN ('OPEN', 'CLOSED')),
  resolution              text CHECK (resolution IN ('RESOLVED', 'UNRESOLVABLE')),
  category                text NOT NULL DEFAULT 'OTHER',
  category_other_text     text,
  reason_text             text,
  child_reason_text       text,
  reason_option_id        integer,
  child_reason_option_id  integer,
  close_text              text,
  resolution_text         text,
  resolution_option       text,
  latest_follow_up_on     timestamptz,
  opened_at               timestamptz NOT NULL DEFAULT now(),
  opened_by               integer REFERENCES users (id),
  opened_by_role_id       integer REFERENCES roles (id),
  with_role_id            integer REFERENCES roles (id),
  resolved_by             integer REFERENCES users (id),
  closed_at               timestamptz,
  closed_by               integer REFERENCES users (id),
  updated_at              timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX queries_study ON queries (study_id, query_status);
CREATE INDEX queries_object ON queries (object_type, object_id);
