-- Slide pipeline: processing progress and the derived objects of an image, and the mail outbox.
-- (The job queue's own tables live in the pgboss schema, created by pg-boss at start.)

ALTER TABLE images
  ADD COLUMN processing_progress   smallint NOT NULL DEFAULT 0 CHECK (processing_progress BETWEEN 0 AND 100),
  ADD COLUMN processing_attempts   integer  NOT NULL DEFAULT 0,
  ADD COLUMN processing_started_at timestamptz,
  ADD COLUMN processed_at          timestamptz,
  ADD COLUMN label_key             text,
  ADD COLUMN macro_key             text,
  ADD COLUMN source_format         text,            -- aperio | generic-tiff | bigtiff | plain-tiff
  ADD COLUMN source_compression    integer;         -- TIFF compression code of level 0
CREATE INDEX images_processing ON images (processing_status) WHERE processing_status IN ('PENDING', 'SUBMITTED');

-- Notifications: written in the transaction of the action that causes them, delivered by SMTP
-- when SMTP_URL is set (at once, and again by the worker while delivery keeps failing).
CREATE TABLE mail_outbox (
  id            bigserial PRIMARY KEY,
  kind          text NOT NULL,
  study_id      integer REFERENCES studies (id),
  user_id       integer REFERENCES users (id),      -- the recipient, when a user
  to_address    text NOT NULL,
  subject       text NOT NULL,
  body          text NOT NULL,
  status        text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'SENT', 'FAILED', 'NOT_CONFIGURED')),
  attempts      integer NOT NULL DEFAULT 0,
  last_error    text,
  created_by    integer REFERENCES users (id),
  created_at    timestamptz NOT NULL DEFAULT now(),
  sent_at       timestamptz
);
CREATE INDEX mail_outbox_pending ON mail_outbox (created_at) WHERE status = 'PENDING';
CREATE INDEX mail_outbox_study ON mail_outbox (study_id, created_at);
