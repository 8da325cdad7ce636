-- Heartbeats of running jobs (issue 9): a worker writes one row per job it runs and refreshes it
-- every few seconds; a reaper in every worker process requeues active jobs whose heartbeat is
-- stale (their worker died), by the database clock, so it works across processes and machines.
CREATE TABLE job_heartbeats (
  job_id   uuid PRIMARY KEY,
  queue    text NOT NULL,
  worker   text NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  beat_at  timestamptz NOT NULL DEFAULT now()
);
