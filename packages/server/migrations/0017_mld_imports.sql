-- Imported AI annotations (issue 17; doc 2 §2.3, §3, §4; docs/MLD.md): the .mld files and their
-- import status, the AI classes of a study (kept apart from the readers' annotation classes), and
-- the link of an imported annotation to its file and class.

CREATE TABLE mld_files (
  id               serial PRIMARY KEY,
  name             text NOT NULL,
  s3_key           text NOT NULL UNIQUE,
  size_bytes       bigint NOT NULL,
  app_sequence_id  text,
  image_id         integer REFERENCES images (id),
  study_id         integer REFERENCES studies (id),
  uploader_id      integer REFERENCES users (id),
  uploaded_at      timestamptz NOT NULL DEFAULT now(),
  status           text NOT NULL DEFAULT 'UPLOADED'
                   CHECK (status IN ('UPLOADED', 'QUEUED', 'PROCESSING', 'COMPLETE', 'ERROR', 'ARCHIVED')),
  error_message    text,
  num_layers       integer,
  counts           jsonb,
  heatmap_key      text,
  heatmap_name     text,
  completed_at     timestamptz,
  updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mld_files_image ON mld_files (image_id, status);
CREATE INDEX mld_files_list ON mld_files (uploaded_at DESC, id DESC);

CREATE TABLE ai_classes (
  id         serial PRIMARY KEY,
  study_id   integer NOT NULL REFERENCES studies (id),
  name       text NOT NULL,
  color      text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX ai_classes_name ON ai_classes (study_id, lower(name));

ALTER TABLE annotations
  ADD COLUMN mld_file_id integer REFERENCES mld_files (id),
  ADD COLUMN ai_class_id integer REFERENCES ai_classes (id);
CREATE INDEX annotations_mld ON annotations (mld_file_id) WHERE mld_file_id IS NOT NULL;

-- An import ends with its image: archived (replaced, or archived by hand), its completed imports are
-- ARCHIVED too, in the same transaction.
CREATE FUNCTION mld_follow_image_archive() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status = 'ARCHIVED' AND OLD.status IS DISTINCT FROM 'ARCHIVED' THEN
    UPDATE mld_files SET status = 'ARCHIVED', updated_at = now(),
           error_message = coalesce(error_message, 'Its image was archived')
     WHERE image_id = NEW.id AND status IN ('COMPLETE', 'UPLOADED', 'QUEUED');
  END IF;
  RETURN NULL;
END;
$$;
CREATE TRIGGER images_mld_archive AFTER UPDATE OF status ON images
  FOR EACH ROW EXECUTE FUNCTION mld_follow_image_archive();
