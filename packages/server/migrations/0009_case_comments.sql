-- Case comments (doc 3 §3 lastCaseComment, PATCH /api/cases/{id}/comment): kept, never edited; the
-- case view shows the latest.
CREATE TABLE case_comments (
  id          serial PRIMARY KEY,
  case_id     integer NOT NULL REFERENCES cases (id),
  image_id    integer REFERENCES images (id),
  user_id     integer REFERENCES users (id),
  comment     text NOT NULL CHECK (char_length(comment) BETWEEN 1 AND 1000),
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX case_comments_case ON case_comments (case_id, id DESC);
