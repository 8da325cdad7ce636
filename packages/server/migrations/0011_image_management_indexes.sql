-- Image Management at trial size (issue 12, Scale): the lists sort and page over 10^6 images and
-- 10^5 cases. Each sortable column stored on the listed table gets a btree paired with id, the
-- list's tie-breaker, so that a page is a walk of the index in the list's order (nulls last, then
-- by id) instead of a sort of every row. A column that is never null is ordered without NULLS LAST
-- (imQueries.ts), so one index serves both directions; a nullable column needs its DESC NULLS LAST
-- twin. Measured with npm run seed:scale and npm run bench:lists (docs/BENCHMARKS.md).
-- Forward-only; never edited after it lands.

-- Images: the default order (Upload Date) and the date filter; study and status included so the
-- total of a date-filtered list is counted from the index alone.
CREATE INDEX images_im_uploaded ON images (uploaded_at, id) INCLUDE (study_id, status);
CREATE INDEX images_im_name ON images (name, id);
CREATE INDEX images_im_status ON images (status, id);
CREATE INDEX images_im_accession ON images (accession_number, id);
CREATE INDEX images_im_accession_desc ON images (accession_number DESC NULLS LAST, id DESC);
CREATE INDEX images_im_protocol ON images (protocol_id, id);
CREATE INDEX images_im_protocol_desc ON images (protocol_id DESC NULLS LAST, id DESC);
CREATE INDEX images_im_lab_visit ON images (lab_visit_id, id);
CREATE INDEX images_im_lab_visit_desc ON images (lab_visit_id DESC NULLS LAST, id DESC);
CREATE INDEX images_im_segment ON images (biopsy_location, id);
CREATE INDEX images_im_segment_desc ON images (biopsy_location DESC NULLS LAST, id DESC);
-- The totals of a user's studies: counted from the index alone.
CREATE INDEX images_im_study_status ON images (study_id, status);

-- Cases: the default order (Date Created), the status and the case's own columns.
CREATE INDEX cases_im_created ON cases (created_at, id) INCLUDE (study_id, status);
CREATE INDEX cases_im_status ON cases (status, id);
CREATE INDEX cases_im_histo ON cases (histo_procedure_id, id);
CREATE INDEX cases_im_histo_desc ON cases (histo_procedure_id DESC NULLS LAST, id DESC);
CREATE INDEX cases_im_proc ON cases (proc_id, id);
CREATE INDEX cases_im_proc_desc ON cases (proc_id DESC NULLS LAST, id DESC);
CREATE INDEX cases_im_site ON cases (site_id, id);
CREATE INDEX cases_im_site_desc ON cases (site_id DESC NULLS LAST, id DESC);
CREATE INDEX cases_im_subject ON cases (subject_id, id);
CREATE INDEX cases_im_subject_desc ON cases (subject_id DESC NULLS LAST, id DESC);
CREATE INDEX cases_im_visit ON cases (visit_id, id);
CREATE INDEX cases_im_visit_desc ON cases (visit_id DESC NULLS LAST, id DESC);

-- The Queries column (and sort) of the case list: a case's open queries.
CREATE INDEX queries_case_open ON queries (case_id) WHERE query_status = 'OPEN';

-- The total of an image list filtered by nothing but studies and statuses (the first thing the
-- page shows) without counting 10^6 rows: images per study (0: none) and status, kept by a
-- trigger in the transaction that changes them. Concurrent writers of one study and status wait
-- for each other's commit on that row: uploads are not that frequent.
CREATE TABLE image_status_counts (
  study_key integer NOT NULL,
  status    text    NOT NULL,
  n         bigint  NOT NULL,
  PRIMARY KEY (study_key, status)
);

CREATE FUNCTION image_status_counts_add(key integer, st text, delta integer) RETURNS void LANGUAGE sql AS $$
  INSERT INTO image_status_counts (study_key, status, n) VALUES (key, st, delta)
    ON CONFLICT (study_key, status) DO UPDATE SET n = image_status_counts.n + delta;
$$;

-- A change of study or status moves one image from one count row to another. The two rows are
-- always written in key order (study, then status), so two transactions moving images in opposite
-- directions wait for each other instead of deadlocking; an update that changes neither writes none.
CREATE FUNCTION image_status_counts_track() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    DELETE FROM image_status_counts;
    RETURN NULL;
  END IF;
  IF TG_OP = 'INSERT' THEN
    PERFORM image_status_counts_add(coalesce(NEW.study_id, 0), NEW.status, 1);
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM image_status_counts_add(coalesce(OLD.study_id, 0), OLD.status, -1);
  ELSIF (coalesce(OLD.study_id, 0), OLD.status) = (coalesce(NEW.study_id, 0), NEW.status) THEN
    RETURN NULL;
  ELSIF (coalesce(OLD.study_id, 0), OLD.status) < (coalesce(NEW.study_id, 0), NEW.status) THEN
    PERFORM image_status_counts_add(coalesce(OLD.study_id, 0), OLD.status, -1);
    PERFORM image_status_counts_add(coalesce(NEW.study_id, 0), NEW.status, 1);
  ELSE
    PERFORM image_status_counts_add(coalesce(NEW.study_id, 0), NEW.status, 1);
    PERFORM image_status_counts_add(coalesce(OLD.study_id, 0), OLD.status, -1);
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER images_status_counts AFTER INSERT OR DELETE OR UPDATE OF study_id, status ON images
  FOR EACH ROW EXECUTE FUNCTION image_status_counts_track();
CREATE TRIGGER images_status_counts_truncate AFTER TRUNCATE ON images
  FOR EACH STATEMENT EXECUTE FUNCTION image_status_counts_track();

INSERT INTO image_status_counts (study_key, status, n)
  SELECT coalesce(study_id, 0), status, count(*) FROM images GROUP BY 1, 2;
