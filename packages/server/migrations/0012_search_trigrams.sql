-- Image Management search at 10^6 images (issue 12, Scale): a contains search (ILIKE '%…%') over
-- many columns cannot use a btree. Trigram indexes over each table's searched text give the list a
-- small set of candidate rows; the exact, permission-aware condition on each viewable column is
-- still applied to them (imQueries.ts). The text is built by one immutable function per table, so
-- the index and the query share the expression. pg_trgm is a trusted extension (PostgreSQL 13+:
-- the database owner may create it); embedded PGlite loads it at start (database.ts).
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE FUNCTION image_search_text(
  name text, accession text, protocol text, site text, subject text, visit text, lab_visit text, segment text
) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(name, '') || ' ' || coalesce(accession, '') || ' ' || coalesce(protocol, '') || ' ' ||
         coalesce(site, '') || ' ' || coalesce(subject, '') || ' ' || coalesce(visit, '') || ' ' ||
         coalesce(lab_visit, '') || ' ' || coalesce(segment, '')
$$;

CREATE FUNCTION case_search_text(proc text, histo text, site text, subject text, visit text)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(proc, '') || ' ' || coalesce(histo, '') || ' ' || coalesce(site, '') || ' ' ||
         coalesce(subject, '') || ' ' || coalesce(visit, '')
$$;

CREATE INDEX images_search_trgm ON images USING gin (
  image_search_text(name, accession_number, protocol_id, site_id, subject_id, visit_id, lab_visit_id, biopsy_location)
  gin_trgm_ops
);
CREATE INDEX cases_search_trgm ON cases USING gin (
  case_search_text(proc_id, histo_procedure_id, site_id, subject_id, visit_id) gin_trgm_ops
);
CREATE INDEX studies_name_trgm ON studies USING gin (name gin_trgm_ops);
CREATE INDEX organizations_name_trgm ON organizations USING gin (name gin_trgm_ops);
