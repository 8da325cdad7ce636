-- Annotations (issue 14): who deleted a soft-deleted annotation, the centre of point-like annotations
-- as plain columns (the HPF a point belongs to is found by distance, over an index instead of
-- unpacking every row's GeoJSON), and the indexes of the viewer's list (one image's live
-- annotations in id order, a reader's own) and of the multiline walk.
ALTER TABLE annotations
  ADD COLUMN deleted_by integer REFERENCES users (id),
  ADD COLUMN x double precision GENERATED ALWAYS AS (
    CASE WHEN geometry ->> 'type' = 'Point' THEN (geometry #>> '{coordinates,0}')::double precision END
  ) STORED,
  ADD COLUMN y double precision GENERATED ALWAYS AS (
    CASE WHEN geometry ->> 'type' = 'Point' THEN (geometry #>> '{coordinates,1}')::double precision END
  ) STORED;

CREATE INDEX annotations_live_image ON annotations (image_id, id) WHERE deleted_at IS NULL;
CREATE INDEX annotations_live_owner ON annotations (image_id, user_id, annotation_type, x) WHERE deleted_at IS NULL;
CREATE INDEX annotations_parent ON annotations (parent_id) WHERE deleted_at IS NULL AND parent_id IS NOT NULL;
