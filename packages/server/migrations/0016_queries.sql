-- Queries (issue 15; spec doc 3 §3–§7): the reason catalogue, comments, follow-up reminders, and
-- what the lifecycle records on the query. See docs/QUERIES.md.

-- The reason catalogue: per object type and target role, top-level reasons with one level of
-- sub-reasons. Reasons are never deleted (a query keeps the text it was opened with, and the id);
-- a deactivated reason is no longer offered.
CREATE TABLE query_reasons (
  id           serial PRIMARY KEY,
  object_type  text NOT NULL CHECK (object_type IN ('CASE', 'IMAGE')),
  with_role_id integer NOT NULL REFERENCES roles (id),
  parent_id    integer REFERENCES query_reasons (id),
  reason_text  text NOT NULL CHECK (length(btrim(reason_text)) > 0),
  active       boolean NOT NULL DEFAULT true,
  sort_order   integer NOT NULL DEFAULT 0,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);
-- One text once among the siblings of a place (case-insensitive).
CREATE UNIQUE INDEX query_reasons_sibling_text
  ON query_reasons (object_type, with_role_id, coalesce(parent_id, 0), lower(reason_text));

CREATE TABLE query_comments (
  id           serial PRIMARY KEY,
  query_id     integer NOT NULL REFERENCES queries (id),
  comment_text text NOT NULL,
  comment_by   integer NOT NULL REFERENCES users (id),
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX query_comments_query ON query_comments (query_id, id);

-- A follow-up date (doc 3 §3 Query reminder): the first comes with the query, each follow-up adds
-- one. reminded_on is set when the reminder e-mail for that date went out (at most once).
CREATE TABLE query_reminders (
  id           serial PRIMARY KEY,
  query_id     integer NOT NULL REFERENCES queries (id),
  follow_up_on date NOT NULL,
  reminded_on  timestamptz,
  reminded_by  integer REFERENCES users (id),
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX query_reminders_query ON query_reminders (query_id, id);
-- The reminder job's candidates: reminders not yet sent, by date.
CREATE INDEX query_reminders_due ON query_reminders (follow_up_on) WHERE reminded_on IS NULL;

ALTER TABLE queries
  ADD COLUMN first_reminder_id integer REFERENCES query_reminders (id),
  ADD COLUMN last_reminder_id  integer REFERENCES query_reminders (id),
  ADD COLUMN resolved_at       timestamptz,
  ADD CONSTRAINT queries_category CHECK (category IN ('BLURRY', 'INCOMPLETE', 'BAD_FILENAME', 'OTHER',
    'INTERNAL_WITH_DM', 'INTERNAL_WITH_PM', 'INTERNAL_WITH_CR', 'INTERNAL_WITH_OTHER'));

-- The follow-up date is a date (doc 3 §5: days from today).
ALTER TABLE queries ALTER COLUMN latest_follow_up_on TYPE date USING latest_follow_up_on::date;

-- The queries list: by study and status, newest first; per object; per case.
CREATE INDEX queries_list ON queries (object_type, study_id, opened_at DESC, id DESC);
CREATE INDEX queries_case ON queries (case_id) WHERE case_id IS NOT NULL;

-- An image query follows its image: when the image moves to another case or study, so do its
-- queries (the case's open-query count follows through the trigger of 0013), so the case viewer,
-- the lists and the study scope see the query where the image is.
CREATE FUNCTION image_queries_follow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.case_id IS DISTINCT FROM OLD.case_id OR NEW.study_id IS DISTINCT FROM OLD.study_id THEN
    UPDATE queries
       SET case_id = NEW.case_id,
           study_id = coalesce(NEW.study_id, queries.study_id)
     WHERE object_type = 'IMAGE' AND object_id = NEW.id
       AND (case_id IS DISTINCT FROM NEW.case_id OR study_id IS DISTINCT FROM coalesce(NEW.study_id, queries.study_id));
  END IF;
  RETURN NULL;
END;
$$;
CREATE TRIGGER images_queries_follow AFTER UPDATE OF case_id, study_id ON images
  FOR EACH ROW EXECUTE FUNCTION image_queries_follow();
