-- Electronic signatures (issue 30; 21 CFR Part 11; docs/COMPLIANCE.md). In a study whose
-- `signatures` setting is on, Mark as Scored, Pass Lab QC and Pass ISC QC are signed with the
-- signer's password. Each signature is a row here, written in the transaction of the action it
-- signs: the signer, their printed name and the time (§11.50), the meaning, and the record it
-- signs — the case (and image) it belongs to and a SHA-256 of the content signed (§11.70).
-- A signature is never changed, deleted or moved to another record: the trigger below refuses
-- UPDATE and DELETE.
CREATE TABLE signatures (
  id            serial PRIMARY KEY,
  user_id       integer NOT NULL REFERENCES users (id),
  printed_name  text NOT NULL CONSTRAINT signatures_printed_name CHECK (length(printed_name) BETWEEN 1 AND 300),
  signed_at     timestamptz NOT NULL,
  kind          text NOT NULL CONSTRAINT signatures_kind CHECK (kind IN ('READ', 'LAB_QC', 'ISC_QC')),
  meaning       text NOT NULL,
  method        text NOT NULL CONSTRAINT signatures_method CHECK (method IN ('password', 'oidc')),
  study_id      integer NOT NULL REFERENCES studies (id),
  case_id       integer NOT NULL REFERENCES cases (id),
  image_id      integer REFERENCES images (id),
  content       jsonb NOT NULL,
  content_hash  text NOT NULL CONSTRAINT signatures_content_hash CHECK (content_hash ~ '^[0-9a-f]{64}$')
);

CREATE INDEX signatures_case ON signatures (case_id, user_id);

CREATE FUNCTION signatures_unchangeable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'an electronic signature is never changed or deleted (signature %)', OLD.id;
END;
$$;

CREATE TRIGGER signatures_unchangeable BEFORE UPDATE OR DELETE ON signatures
  FOR EACH ROW EXECUTE FUNCTION signatures_unchangeable();

COMMENT ON TABLE signatures IS
  'Part 11 electronic signatures (issue 30): who signed what, when, with which meaning; never changed.';
COMMENT ON COLUMN signatures.printed_name IS 'The signer''s printed name at signing (first and last name, else username).';
COMMENT ON COLUMN signatures.meaning IS 'The meaning shown to the signer (domain SIGNATURE_MEANINGS).';
COMMENT ON COLUMN signatures.content IS 'What was signed, as canonical JSON (its keys sorted); content_hash is its SHA-256.';
COMMENT ON COLUMN signatures.method IS 'How the signer was authenticated: their Lamina password, or a fresh sign-in at the identity provider.';
