-- What tables and columns mean, kept in the database (issue 27): `npm run db:types` reads these
-- comments into the generated table types (packages/server/src/platform/db/schema.ts), and psql's
-- \d+ shows them. A later migration that adds a column whose name does not say enough adds its
-- COMMENT ON next to it. Comments only: no data or structure changes. Forward-only.

COMMENT ON TABLE schema_migrations IS 'The migration files applied, by name (platform/db/migrate.ts).';

COMMENT ON TABLE user_roles IS 'Roles held on the user itself, not per study (StudyAdmin, Site, NOTO, LIS …).';
COMMENT ON COLUMN users.must_change_password IS
  'Set for an account created with a one-time initial password; cleared by the password change.';
COMMENT ON COLUMN users.access_generation IS
  'Bumped when the user loses access; tile tokens of an older generation stop working.';

COMMENT ON COLUMN sessions.id IS
  'HMAC (SESSION_SECRET) of the cookie token, hex: a copy of the table logs nobody in.';
COMMENT ON COLUMN sessions.auth_method IS 'How the session was opened.';
COMMENT ON COLUMN sessions.id_token IS
  'An OpenID Connect session''s ID token (the id_token_hint of the logout at the provider).';
COMMENT ON TABLE login_failures IS
  'Failed login attempts, for throttling (one account from one IP within a window).';

COMMENT ON TABLE audit_events IS
  'The audit trail: append-only (triggers refuse UPDATE, DELETE and TRUNCATE) and hash-chained. id is '
  'the position in the chain, assigned by recordAudit under an advisory lock: no gaps, no forks.';

COMMENT ON COLUMN studies.visit_ids IS 'In order: visit_ids[i] pairs with lab_visit_ids[i].';

COMMENT ON COLUMN cases.proc_id IS 'The Endo Procedure ID: unique (in any case) among a study''s cases that are not archived.';
COMMENT ON COLUMN cases.on_hold_from IS 'The status a case on hold left, restored when the hold ends.';
COMMENT ON COLUMN cases.open_queries IS
  'Open queries naming the case (its own and its images''), kept by a trigger on queries.';
COMMENT ON TABLE case_readers IS 'Central readers assigned to a case.';
COMMENT ON COLUMN case_readers.read_at IS 'Set when the reader marks the case scored.';
COMMENT ON COLUMN case_readers.include_ai_counts IS
  'The reader''s choice at Mark as Scored to include imported AI counts; null: not asked (no AI annotations).';
COMMENT ON TABLE case_comments IS 'Case comments: kept, never edited; the case view shows the latest.';
COMMENT ON COLUMN case_comments.by_reader IS
  'Written by a blinded reader: shown to its author and to the roles that are not blinded, never to another reader.';

COMMENT ON COLUMN images.biopsy_location IS 'The anatomical segment.';
COMMENT ON COLUMN images.ignored IS 'Hidden from readers.';
COMMENT ON COLUMN images.mpp IS 'Microns per pixel at full resolution.';
COMMENT ON COLUMN images.original_version IS
  'Storage version (head) of the original when content_sha256 was computed.';
COMMENT ON COLUMN images.copied_from_image_id IS
  'The image this one was copied from; the copy shares its stored original and pyramid.';
COMMENT ON COLUMN images.is_study_matched IS
  'The sample-data import assigned the image''s study by its Protocol ID.';
COMMENT ON COLUMN images.is_case_matched IS
  'The sample-data import assigned the image''s case by study, subject, visit and Endo Procedure ID.';
COMMENT ON COLUMN images.processing_progress IS 'Progress of the processing job, 0–100.';
COMMENT ON COLUMN images.source_format IS 'The original''s format: aperio | generic-tiff | bigtiff | plain-tiff.';
COMMENT ON COLUMN images.source_compression IS 'The TIFF compression code of level 0.';
COMMENT ON COLUMN images.sort_sponsor IS
  'Sort columns of Image Management, kept by triggers (never written by the application): studies.sponsor.';
COMMENT ON COLUMN images.sort_study_name IS 'Sort column, kept by triggers: studies.name.';
COMMENT ON COLUMN images.sort_organization IS 'Sort column, kept by triggers: organizations.name.';
COMMENT ON COLUMN images.sort_site_id IS 'Sort column, kept by triggers: coalesce(cases.site_id, images.site_id).';
COMMENT ON COLUMN images.sort_subject_id IS
  'Sort column, kept by triggers: coalesce(cases.subject_id, images.subject_id).';
COMMENT ON COLUMN images.sort_visit_id IS 'Sort column, kept by triggers: coalesce(cases.visit_id, images.visit_id).';
COMMENT ON COLUMN images.sort_histo_procedure_id IS 'Sort column, kept by triggers: cases.histo_procedure_id.';
COMMENT ON COLUMN images.sort_proc_id IS 'Sort column, kept by triggers: cases.proc_id (Endo Procedure ID).';
COMMENT ON COLUMN images.sort_collection_date IS
  'Sort column, kept by triggers: coalesce(images.specimen_collection_date, cases.specimen_collection_date).';
COMMENT ON TABLE image_status_counts IS
  'Images per study (study_key 0: none) and status, kept by a trigger on images: the Image Management total without counting rows.';

COMMENT ON COLUMN annotations.geometry IS 'A GeoJSON geometry.';
COMMENT ON COLUMN annotations.x IS 'The centre of a Point geometry (computed from geometry).';
COMMENT ON COLUMN annotations.y IS 'The centre of a Point geometry (computed from geometry).';
COMMENT ON COLUMN annotations.mld_file_id IS 'An imported (AI) annotation''s .mld file.';
COMMENT ON COLUMN annotations.ai_class_id IS 'An imported (AI) annotation''s AI class.';

COMMENT ON TABLE queries IS 'Queries on a case or an image (docs/QUERIES.md).';
COMMENT ON COLUMN queries.with_user_id IS
  'A query sent to a reading role names its reader: only they see and answer it.';
COMMENT ON TABLE query_reasons IS
  'The reason catalogue: per object type and target role, top-level reasons with one level of sub-reasons. '
  'Never deleted (a query keeps the text it was opened with); a deactivated reason is no longer offered.';
COMMENT ON TABLE query_reminders IS
  'Follow-up dates of a query: the first comes with the query, each follow-up adds one.';
COMMENT ON COLUMN query_reminders.reminded_on IS
  'Set when the reminder e-mail for follow_up_on went out (at most once).';

COMMENT ON TABLE mld_files IS 'Imported .mld files (AI annotations) and their import status (docs/MLD.md).';
COMMENT ON COLUMN mld_files.counts IS 'What the import counted; null until it completes.';
COMMENT ON TABLE ai_classes IS
  'The AI classes of a study, from imported .mld files; kept apart from the readers'' annotation classes.';

COMMENT ON TABLE sample_imports IS
  'Sample-data imports: progress and outcome of each; the result CSV is in object storage under result_key (docs/SAMPLE-DATA.md).';
COMMENT ON TABLE mail_outbox IS
  'Notifications, written in the transaction of the action that causes them, waiting for (or done with) SMTP delivery.';
COMMENT ON COLUMN mail_outbox.user_id IS 'The recipient, when a user.';
COMMENT ON TABLE job_heartbeats IS
  'A running job''s heartbeat, refreshed by its worker; a reaper requeues jobs whose heartbeat is stale (platform/jobs/jobQueue.ts).';
