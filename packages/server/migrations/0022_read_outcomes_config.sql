-- Read outcomes, the study configuration (issue 30, docs/OUTCOMES.md): a study's endpoints, its
-- adjudication rule and whether its reads are Part 11 electronic signatures. The server writes them
-- only after the domain's rules (endpointsSchema, adjudicationSchema, validateStudyConfig); the
-- checks here keep the shapes a reader of the table can rely on. Existing studies get none, none
-- and off.
ALTER TABLE studies
  ADD COLUMN endpoints jsonb NOT NULL DEFAULT '[]'
    CONSTRAINT studies_endpoints_array CHECK (jsonb_typeof(endpoints) = 'array'),
  ADD COLUMN adjudication jsonb
    CONSTRAINT studies_adjudication_object CHECK (adjudication IS NULL OR jsonb_typeof(adjudication) = 'object'),
  ADD COLUMN signatures boolean NOT NULL DEFAULT false;

COMMENT ON COLUMN studies.endpoints IS
  'Read-outcome endpoints, [{ key, label, kind, className?, threshold?, positiveWhen? }] (domain endpointsSchema).';
COMMENT ON COLUMN studies.adjudication IS
  'Adjudication rule, { endpointKey, rule, value? } (domain adjudicationSchema); null: no adjudication.';
COMMENT ON COLUMN studies.signatures IS
  'Mark as Scored, Pass Lab QC and Pass ISC QC are Part 11 electronic signatures (issue 30).';
