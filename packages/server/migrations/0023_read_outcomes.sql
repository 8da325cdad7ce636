-- Read outcomes (issue 30, docs/OUTCOMES.md): each reader's value of each of the study's endpoints on
-- a case, computed by the server from the reader's own annotations (domain computeEndpoint) and
-- frozen in Mark as Scored's transaction. Undoing the read (reopen, revert, the reader removed from
-- the case) deletes the reader's rows in its transaction; marking again writes them anew. The audit
-- trail keeps every frozen and cleared value (READ_OUTCOMES_FROZEN, READ_OUTCOMES_CLEARED).
--
-- Reads by case use the unique index, whose first column is case_id: no second index on case_id.
CREATE TABLE read_outcomes (
  id           serial PRIMARY KEY,
  case_id      integer NOT NULL REFERENCES cases (id),
  reader_id    integer NOT NULL REFERENCES users (id),
  endpoint_key text NOT NULL CONSTRAINT read_outcomes_endpoint_key CHECK (endpoint_key ~ '^[a-z0-9_]{1,32}$'),
  value        double precision
               CONSTRAINT read_outcomes_value_finite CHECK (value IS NULL OR value NOT IN ('NaN', 'Infinity', '-Infinity')),
  positive     boolean,
  reason       text,
  reader_role  text NOT NULL DEFAULT 'PRIMARY' CHECK (reader_role IN ('PRIMARY', 'ADJUDICATOR')),
  scored_at    timestamptz NOT NULL,
  CONSTRAINT read_outcomes_value_or_reason CHECK ((value IS NULL) = (reason IS NOT NULL)),
  CONSTRAINT read_outcomes_one_value UNIQUE (case_id, reader_id, endpoint_key)
);

COMMENT ON TABLE read_outcomes IS
  'Each reader''s frozen value of each study endpoint on a case (issue 30): written at Mark as Scored, '
  'deleted when the read is undone.';
COMMENT ON COLUMN read_outcomes.endpoint_key IS 'The key of one of the study''s endpoints (studies.endpoints).';
COMMENT ON COLUMN read_outcomes.value IS
  'The endpoint''s value, unrounded; null when it cannot be computed (then reason says why).';
COMMENT ON COLUMN read_outcomes.positive IS
  'The binary reading from the endpoint''s threshold and positiveWhen; null without a threshold or a value.';
COMMENT ON COLUMN read_outcomes.reason IS 'Why value is null (domain ENDPOINT_MESSAGES); null when there is a value.';
COMMENT ON COLUMN read_outcomes.reader_role IS
  'PRIMARY: one of the case''s assigned readers; ADJUDICATOR: the adjudicator''s read (issue 30, later).';
COMMENT ON COLUMN read_outcomes.scored_at IS 'When the reader marked the case scored (case_readers.read_at).';
