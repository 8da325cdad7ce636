-- Adjudication (issue 30, docs/OUTCOMES.md): when every primary reader has marked a case scored and
-- the study's adjudication rule fires on their frozen values, the case waits in Pending Adjudication
-- for an adjudicator — a central reader of the study who is not one of its readers — assigned by ISC
-- or DM. The adjudicator is a row of case_readers with role ADJUDICATOR: it gives them sight of the
-- case and its images (the blinded reader's scope) and their own read (read_at, include_ai_counts)
-- exactly as a primary reader's. Everything that counts "the case's readers" counts PRIMARY rows.
ALTER TABLE cases DROP CONSTRAINT cases_status_check;
ALTER TABLE cases ADD CONSTRAINT cases_status_check
  CHECK (status IN ('PENDING_LAB_QC', 'PENDING_QC', 'PROCESSED', 'PENDING_ADJUDICATION', 'COMPLETED', 'ON_HOLD',
                    'INVALID', 'ARCHIVED'));
ALTER TABLE cases DROP CONSTRAINT cases_on_hold_from_check;
ALTER TABLE cases ADD CONSTRAINT cases_on_hold_from_check
  CHECK (on_hold_from IN ('PENDING_LAB_QC', 'PENDING_QC', 'PROCESSED', 'PENDING_ADJUDICATION', 'COMPLETED'));

ALTER TABLE case_readers
  ADD COLUMN role text NOT NULL DEFAULT 'PRIMARY' CONSTRAINT case_readers_role CHECK (role IN ('PRIMARY', 'ADJUDICATOR'));

-- One adjudicator per case.
CREATE UNIQUE INDEX case_readers_one_adjudicator ON case_readers (case_id) WHERE role = 'ADJUDICATOR';

COMMENT ON COLUMN case_readers.role IS
  'PRIMARY: one of the case''s assigned readers; ADJUDICATOR: the reader assigned to a case pending '
  'adjudication (issue 30), whose read decides its final values.';
