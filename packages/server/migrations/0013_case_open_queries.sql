-- The open queries of a case (its own and its images': queries.case_id), kept on the case row by a
-- trigger on queries in the transaction that changes them (issue 12, Scale): the case list's Queries
-- column and its sort read a column instead of counting per case (96 877 count subqueries to sort
-- the cases of every study: 116–132 ms), and the study page's Cases tab and the case view read the same.
ALTER TABLE cases ADD COLUMN open_queries integer NOT NULL DEFAULT 0;

UPDATE cases SET open_queries = q.n
  FROM (SELECT case_id, count(*)::int AS n FROM queries WHERE query_status = 'OPEN' AND case_id IS NOT NULL GROUP BY case_id) q
 WHERE q.case_id = cases.id;

CREATE FUNCTION case_open_queries_add(target integer, delta integer) RETURNS void LANGUAGE sql AS $$
  UPDATE cases SET open_queries = open_queries + delta WHERE id = target;
$$;

-- A query moving between cases changes two case rows: written in id order, so two such moves in
-- opposite directions wait for each other instead of deadlocking; an update that changes neither
-- its case nor whether it is open writes none.
CREATE FUNCTION case_open_queries_track() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  was integer := CASE WHEN TG_OP <> 'INSERT' AND OLD.query_status = 'OPEN' THEN OLD.case_id END;
  now_ integer := CASE WHEN TG_OP <> 'DELETE' AND NEW.query_status = 'OPEN' THEN NEW.case_id END;
BEGIN
  IF was IS NOT DISTINCT FROM now_ THEN
    RETURN NULL;
  END IF;
  IF was IS NOT NULL AND (now_ IS NULL OR was < now_) THEN
    PERFORM case_open_queries_add(was, -1);
    IF now_ IS NOT NULL THEN PERFORM case_open_queries_add(now_, 1); END IF;
  ELSE
    IF now_ IS NOT NULL THEN PERFORM case_open_queries_add(now_, 1); END IF;
    IF was IS NOT NULL THEN PERFORM case_open_queries_add(was, -1); END IF;
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER queries_case_open_count AFTER INSERT OR DELETE OR UPDATE OF case_id, query_status ON queries
  FOR EACH ROW EXECUTE FUNCTION case_open_queries_track();

CREATE INDEX cases_im_open_queries ON cases (open_queries, id);
