-- Storage integrity (issue 9): a registered original is sealed by the worker under
-- originals/{id}/… (a key no signed URL was issued for) and never replaced; its SHA-256 (content_sha256)
-- is recorded with the object's version, so a download re-hashes only when the object changed.
-- The pyramid's SHA-256 is recorded too; `npm run storage:verify` re-checks both.
ALTER TABLE images
  ADD COLUMN original_version text,
  ADD COLUMN pyramid_sha256   text;
