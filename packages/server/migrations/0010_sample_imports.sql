-- Sample-data import (issue 12; doc 2 §3–4, docs/SAMPLE-DATA.md): each import of a sample-data file,
-- its progress (any process can answer the dialog's poll) and its outcome; the result CSV is in
-- object storage under result_key.
CREATE TABLE sample_imports (
  id                 serial PRIMARY KEY,
  user_id            integer NOT NULL REFERENCES users (id),
  sample_key         text NOT NULL UNIQUE,
  result_key         text NOT NULL,
  file_name          text NOT NULL,
  status             text NOT NULL DEFAULT 'PROCESSING' CHECK (status IN ('PROCESSING', 'COMPLETE', 'FAILED')),
  total_rows         integer NOT NULL DEFAULT 0,
  done_rows          integer NOT NULL DEFAULT 0,
  rows_updated       integer NOT NULL DEFAULT 0,
  fields_updated     integer NOT NULL DEFAULT 0,
  rows_failed        integer NOT NULL DEFAULT 0,
  message            text,
  created_at         timestamptz NOT NULL DEFAULT now(),
  finished_at        timestamptz
);

-- doc 2 §3 image record: isStudyMatched (the import assigned the image's study by its Protocol ID),
-- isCaseMatched (the import assigned its case by study, subject, visit and Endo Procedure ID).
ALTER TABLE images ADD COLUMN is_study_matched boolean NOT NULL DEFAULT false;
ALTER TABLE images ADD COLUMN is_case_matched boolean NOT NULL DEFAULT false;

-- The import finds images by its key column.
CREATE INDEX images_import_accession ON images (accession_number) WHERE accession_number IS NOT NULL;
CREATE INDEX images_import_barcode ON images (machine_readable_barcode) WHERE machine_readable_barcode IS NOT NULL;
CREATE INDEX images_import_name ON images (name);
