-- Image Management at 10^6 images, the rest of issue 12's Scale goal (docs/BENCHMARKS.md):
-- - Sorts on another table's value (Sponsor, Study Name, Organization, the case's Site / Subject /
--   Visit ID, Histo / Endo Procedure ID, Collection Date) joined every visible row and kept the top
--   20 (190–900 ms). Those values are copied onto the image row as sort columns, kept by triggers
--   in the transaction that changes them, with (key, id) indexes, so that the list's ORDER BY walks
--   an index (imQueries.ts). Each holds exactly the value the list shows (the joined one, with the
--   same coalesce rules); the shown values are still read from the joined rows.
--   imageSortColumns.test.ts checks them against the joins after every kind of change.
-- - Per-study indexes for a few studies' lists sorted by a key that clusters by study.
-- - One trigram index over the row's searched text, the sort columns included.
-- Forward-only.

ALTER TABLE images
  ADD COLUMN sort_sponsor            text,  -- studies.sponsor
  ADD COLUMN sort_study_name         text,  -- studies.name
  ADD COLUMN sort_organization       text,  -- organizations.name
  ADD COLUMN sort_site_id            text,  -- coalesce(cases.site_id, images.site_id)
  ADD COLUMN sort_subject_id         text,  -- coalesce(cases.subject_id, images.subject_id)
  ADD COLUMN sort_visit_id           text,  -- coalesce(cases.visit_id, images.visit_id)
  ADD COLUMN sort_histo_procedure_id text,  -- cases.histo_procedure_id
  ADD COLUMN sort_proc_id            text,  -- cases.proc_id (Endo Procedure ID)
  ADD COLUMN sort_collection_date    date;  -- coalesce(images.specimen_collection_date, cases.specimen_collection_date)

-- An image row's sort columns, from its study, case and organization. A reference that changes
-- (or a new row's) is read FOR SHARE: a concurrent rename or case edit either commits first (and
-- is read here) or waits for this transaction (and then rewrites this row with the others).
CREATE FUNCTION images_sort_columns() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  is_new boolean := TG_OP = 'INSERT';
  c_site text; c_subject text; c_visit text; c_histo text; c_proc text; c_date date;
BEGIN
  IF is_new OR NEW.study_id IS DISTINCT FROM OLD.study_id THEN
    NEW.sort_study_name := NULL;
    NEW.sort_sponsor := NULL;
    IF NEW.study_id IS NOT NULL THEN
      SELECT name, sponsor INTO NEW.sort_study_name, NEW.sort_sponsor FROM studies WHERE id = NEW.study_id FOR SHARE;
    END IF;
  END IF;
  IF is_new OR NEW.organization_id IS DISTINCT FROM OLD.organization_id THEN
    NEW.sort_organization := NULL;
    IF NEW.organization_id IS NOT NULL THEN
      SELECT name INTO NEW.sort_organization FROM organizations WHERE id = NEW.organization_id FOR SHARE;
    END IF;
  END IF;
  IF is_new OR NEW.case_id IS DISTINCT FROM OLD.case_id OR NEW.site_id IS DISTINCT FROM OLD.site_id
     OR NEW.subject_id IS DISTINCT FROM OLD.subject_id OR NEW.visit_id IS DISTINCT FROM OLD.visit_id
     OR NEW.specimen_collection_date IS DISTINCT FROM OLD.specimen_collection_date THEN
    IF NEW.case_id IS NOT NULL THEN
      IF is_new OR NEW.case_id IS DISTINCT FROM OLD.case_id THEN
        SELECT site_id, subject_id, visit_id, histo_procedure_id, proc_id, specimen_collection_date
          INTO c_site, c_subject, c_visit, c_histo, c_proc, c_date
          FROM cases WHERE id = NEW.case_id FOR SHARE;
      ELSE
        SELECT site_id, subject_id, visit_id, histo_procedure_id, proc_id, specimen_collection_date
          INTO c_site, c_subject, c_visit, c_histo, c_proc, c_date
          FROM cases WHERE id = NEW.case_id;
      END IF;
    END IF;
    NEW.sort_site_id := coalesce(c_site, NEW.site_id);
    NEW.sort_subject_id := coalesce(c_subject, NEW.subject_id);
    NEW.sort_visit_id := coalesce(c_visit, NEW.visit_id);
    NEW.sort_histo_procedure_id := c_histo;
    NEW.sort_proc_id := c_proc;
    NEW.sort_collection_date := coalesce(NEW.specimen_collection_date, c_date);
  END IF;
  RETURN NEW;
END;
$$;

CREATE TRIGGER images_sort_columns
  BEFORE INSERT OR UPDATE OF study_id, case_id, organization_id, site_id, subject_id, visit_id, specimen_collection_date
  ON images FOR EACH ROW EXECUTE FUNCTION images_sort_columns();

-- A case's values on its images (an update that changes none of them writes no image).
CREATE FUNCTION cases_sort_columns() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE images SET
      sort_site_id = coalesce(NEW.site_id, images.site_id),
      sort_subject_id = coalesce(NEW.subject_id, images.subject_id),
      sort_visit_id = coalesce(NEW.visit_id, images.visit_id),
      sort_histo_procedure_id = NEW.histo_procedure_id,
      sort_proc_id = NEW.proc_id,
      sort_collection_date = coalesce(images.specimen_collection_date, NEW.specimen_collection_date)
    WHERE images.case_id = NEW.id
      AND (sort_site_id, sort_subject_id, sort_visit_id, sort_histo_procedure_id, sort_proc_id, sort_collection_date)
          IS DISTINCT FROM
          (coalesce(NEW.site_id, images.site_id), coalesce(NEW.subject_id, images.subject_id),
           coalesce(NEW.visit_id, images.visit_id), NEW.histo_procedure_id, NEW.proc_id,
           coalesce(images.specimen_collection_date, NEW.specimen_collection_date));
  RETURN NULL;
END;
$$;

CREATE TRIGGER cases_sort_columns
  AFTER UPDATE OF site_id, subject_id, visit_id, histo_procedure_id, proc_id, specimen_collection_date ON cases
  FOR EACH ROW
  WHEN ((OLD.site_id, OLD.subject_id, OLD.visit_id, OLD.histo_procedure_id, OLD.proc_id, OLD.specimen_collection_date)
        IS DISTINCT FROM
        (NEW.site_id, NEW.subject_id, NEW.visit_id, NEW.histo_procedure_id, NEW.proc_id, NEW.specimen_collection_date))
  EXECUTE FUNCTION cases_sort_columns();

-- A study's name and sponsor on its images (a rename rewrites every image of the study).
CREATE FUNCTION studies_sort_columns() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE images SET sort_study_name = NEW.name, sort_sponsor = NEW.sponsor
    WHERE images.study_id = NEW.id
      AND (sort_study_name, sort_sponsor) IS DISTINCT FROM (NEW.name, NEW.sponsor);
  RETURN NULL;
END;
$$;

CREATE TRIGGER studies_sort_columns AFTER UPDATE OF name, sponsor ON studies
  FOR EACH ROW WHEN ((OLD.name, OLD.sponsor) IS DISTINCT FROM (NEW.name, NEW.sponsor))
  EXECUTE FUNCTION studies_sort_columns();

-- An organization's name on its images.
CREATE FUNCTION organizations_sort_columns() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE images SET sort_organization = NEW.name
    WHERE images.organization_id = NEW.id AND sort_organization IS DISTINCT FROM NEW.name;
  RETURN NULL;
END;
$$;

CREATE TRIGGER organizations_sort_columns AFTER UPDATE OF name ON organizations
  FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name)
  EXECUTE FUNCTION organizations_sort_columns();

-- 0012's search index over the image's own text is replaced below (Search); it goes before the
-- backfill, which would otherwise rewrite its entries for every image.
DROP INDEX images_search_trgm;
DROP FUNCTION image_search_text(text, text, text, text, text, text, text, text);

-- The images there are. The indexes of the sort columns are built after.
UPDATE images SET
    sort_sponsor = s.sponsor,
    sort_study_name = s.name,
    sort_organization = o.name,
    sort_site_id = coalesce(c.site_id, images.site_id),
    sort_subject_id = coalesce(c.subject_id, images.subject_id),
    sort_visit_id = coalesce(c.visit_id, images.visit_id),
    sort_histo_procedure_id = c.histo_procedure_id,
    sort_proc_id = c.proc_id,
    sort_collection_date = coalesce(images.specimen_collection_date, c.specimen_collection_date)
  FROM images i
  LEFT JOIN studies s ON s.id = i.study_id
  LEFT JOIN cases c ON c.id = i.case_id
  LEFT JOIN organizations o ON o.id = i.organization_id
  WHERE i.id = images.id;

-- Search (issue 12, Scale): one trigram index over every column the list searches, as the row
-- holds it — the image's own text, its case's IDs and its study's and organization's names (the
-- sort columns) — gives a search's candidates in one index scan, and the list tests the exact,
-- permission-aware condition on those rows alone (imQueries.ts). It replaces 0012's index over the
-- image's own text, whose candidates needed a union with the images of matching cases, studies and
-- organizations, fetched first and passed back by id. A rename of a study or organization rewrites
-- its images' entries.
CREATE FUNCTION image_row_search_text(
  name text, accession text, protocol text, site text, subject text, visit text, lab_visit text, segment text,
  histo text, proc text, study_name text, organization text
) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(name, '') || ' ' || coalesce(accession, '') || ' ' || coalesce(protocol, '') || ' ' ||
         coalesce(site, '') || ' ' || coalesce(subject, '') || ' ' || coalesce(visit, '') || ' ' ||
         coalesce(lab_visit, '') || ' ' || coalesce(segment, '') || ' ' || coalesce(histo, '') || ' ' ||
         coalesce(proc, '') || ' ' || coalesce(study_name, '') || ' ' || coalesce(organization, '')
$$;

CREATE INDEX images_search_trgm ON images USING gin (
  image_row_search_text(name, accession_number, protocol_id, sort_site_id, sort_subject_id, sort_visit_id,
                        lab_visit_id, biopsy_location, sort_histo_procedure_id, sort_proc_id, sort_study_name,
                        sort_organization)
  gin_trgm_ops
);

-- The list's order by each sort column, both directions (nulls last, then by id), as 0011's.
CREATE INDEX images_im_sponsor ON images (sort_sponsor, id);
CREATE INDEX images_im_sponsor_desc ON images (sort_sponsor DESC NULLS LAST, id DESC);
CREATE INDEX images_im_study_name ON images (sort_study_name, id);
CREATE INDEX images_im_study_name_desc ON images (sort_study_name DESC NULLS LAST, id DESC);
CREATE INDEX images_im_organization ON images (sort_organization, id);
CREATE INDEX images_im_organization_desc ON images (sort_organization DESC NULLS LAST, id DESC);
CREATE INDEX images_im_site ON images (sort_site_id, id);
CREATE INDEX images_im_site_desc ON images (sort_site_id DESC NULLS LAST, id DESC);
CREATE INDEX images_im_subject ON images (sort_subject_id, id);
CREATE INDEX images_im_subject_desc ON images (sort_subject_id DESC NULLS LAST, id DESC);
CREATE INDEX images_im_visit ON images (sort_visit_id, id);
CREATE INDEX images_im_visit_desc ON images (sort_visit_id DESC NULLS LAST, id DESC);
CREATE INDEX images_im_histo ON images (sort_histo_procedure_id, id);
CREATE INDEX images_im_histo_desc ON images (sort_histo_procedure_id DESC NULLS LAST, id DESC);
CREATE INDEX images_im_proc ON images (sort_proc_id, id);
CREATE INDEX images_im_proc_desc ON images (sort_proc_id DESC NULLS LAST, id DESC);
CREATE INDEX images_im_collection ON images (sort_collection_date, id);
CREATE INDEX images_im_collection_desc ON images (sort_collection_date DESC NULLS LAST, id DESC);

-- A list of a few studies (a lab technician's, a study filter) merges the studies' own orders
-- (imQueries.ts) where the whole table's order would put other studies' images first: by upload
-- date (deep pages; status included so the archived are skipped in the index), protocol, segment,
-- and id (a study's name and sponsor are the same for all its images). The upload-date one
-- replaces images_study (study_id, uploaded_at DESC), which it serves too.
CREATE INDEX images_im_study_id ON images (study_id, id);
CREATE INDEX images_im_study_uploaded ON images (study_id, uploaded_at, id) INCLUDE (status);
DROP INDEX images_study;
CREATE INDEX images_im_study_protocol ON images (study_id, protocol_id, id);
CREATE INDEX images_im_study_protocol_desc ON images (study_id, protocol_id DESC NULLS LAST, id DESC);
CREATE INDEX images_im_study_segment ON images (study_id, biopsy_location, id);
CREATE INDEX images_im_study_segment_desc ON images (study_id, biopsy_location DESC NULLS LAST, id DESC);
