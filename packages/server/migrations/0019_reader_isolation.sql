-- Independent reads (issue 26): what one blinded reader writes never reaches another reader of the
-- same case. Queries and case comments are decided by person for readers, not by role.

-- A query sent to a reading role (CR, NOTO) is sent to one reader of the case: that reader, and no
-- other, sees it and answers it. Queries opened earlier to a reading role go to the case's reader
-- when it has exactly one; otherwise to nobody in person (no reader sees them; the roles that see
-- every query still do).
ALTER TABLE queries ADD COLUMN with_user_id integer REFERENCES users (id);
UPDATE queries q
   SET with_user_id = (SELECT min(r.user_id) FROM case_readers r WHERE r.case_id = q.case_id)
 WHERE q.with_role_id IN (SELECT id FROM roles WHERE name IN ('CR', 'NOTO'))
   AND q.case_id IS NOT NULL
   AND (SELECT count(*) FROM case_readers r WHERE r.case_id = q.case_id) = 1;
CREATE INDEX queries_with_user ON queries (with_user_id) WHERE with_user_id IS NOT NULL;
CREATE INDEX queries_opened_by ON queries (opened_by);

-- Whether a case comment was written by a blinded reader (working as CR or NOTO): such a comment is
-- shown to its author and to the roles that are not blinded, never to another reader. Earlier
-- comments count as a reader's when their author is a reader of the case.
ALTER TABLE case_comments ADD COLUMN by_reader boolean NOT NULL DEFAULT false;
UPDATE case_comments c
   SET by_reader = true
 WHERE EXISTS (SELECT 1 FROM case_readers r WHERE r.case_id = c.case_id AND r.user_id = c.user_id);

-- A reader's choice at Mark as Scored to include or exclude imported AI counts is part of their read
-- (null: not asked, the image had no AI annotations). Readers no longer set the image's
-- accept_ai_annotations: a second reader would read the first one's choice there.
ALTER TABLE case_readers ADD COLUMN include_ai_counts boolean;
