-- Users and study access (issue 4): accounts created by a system admin start with a one-time
-- password that must be changed (the change screen comes later), and lists search and count fast.
-- Forward-only; never edited after it lands.

ALTER TABLE users
  ADD COLUMN must_change_password boolean NOT NULL DEFAULT false;

-- Study access by user and role (visibility checks: user, work-as role, study).
CREATE INDEX study_access_user_role ON study_access (user_id, role_id, study_id);

-- Reader counts of the studies list: a reader's assignments by case.
CREATE INDEX case_readers_user_case ON case_readers (user_id, case_id) INCLUDE (read_at);

-- Unassigned images of a study.
CREATE INDEX images_study_unassigned ON images (study_id) WHERE case_id IS NULL;
