-- Cases (issue 11): the hold remembers the status it left, a revert is flagged, the Endo Procedure
-- ID is unique among a study's live cases, and a copied image names the image it was copied from
-- (the copy shares its stored original and pyramid: no second upload, no reprocessing).
ALTER TABLE cases
  ADD COLUMN on_hold_from          text CHECK (on_hold_from IN ('PENDING_LAB_QC', 'PENDING_QC', 'PROCESSED', 'COMPLETED')),
  ADD COLUMN case_status_reverted  boolean NOT NULL DEFAULT false,
  ADD COLUMN archived_at           timestamptz;
CREATE UNIQUE INDEX cases_study_proc_id ON cases (study_id, lower(proc_id)) WHERE status <> 'ARCHIVED';
CREATE INDEX cases_study_created ON cases (study_id, created_at DESC);
CREATE INDEX cases_subject ON cases (study_id, subject_id);

ALTER TABLE images ADD COLUMN copied_from_image_id integer REFERENCES images (id);
