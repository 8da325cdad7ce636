-- Foundation: organizations, users, roles, permissions, study access, studies, sessions, audit trail.
-- Forward-only; never edited after it lands.

CREATE TABLE organizations (
  id          serial PRIMARY KEY,
  name        text NOT NULL UNIQUE,
  group_email text,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE roles (
  id           integer PRIMARY KEY,
  name         text NOT NULL UNIQUE,
  display_name text NOT NULL,
  description  text NOT NULL,
  role_type    text NOT NULL CHECK (role_type IN ('SYSTEM', 'GLOBAL', 'STUDY', 'INTEGRATION')),
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE permissions (
  name        text PRIMARY KEY,
  area        text NOT NULL,
  description text NOT NULL
);

CREATE TABLE role_permissions (
  role_id    integer NOT NULL REFERENCES roles (id),
  permission text NOT NULL REFERENCES permissions (name),
  PRIMARY KEY (role_id, permission)
);

CREATE TABLE users (
  id               serial PRIMARY KEY,
  username         text NOT NULL,
  first_name       text,
  last_name        text,
  organization_id  integer REFERENCES organizations (id),
  registered       boolean NOT NULL DEFAULT false,
  is_system_admin  boolean NOT NULL DEFAULT false,
  active           boolean NOT NULL DEFAULT true,
  password_hash    text,
  work_as_role_id  integer REFERENCES roles (id),
  last_login_at    timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_username_lower ON users (lower(username));

-- Roles held on the user itself, not per study (StudyAdmin, Site, NOTO, LIS …).
CREATE TABLE user_roles (
  user_id integer NOT NULL REFERENCES users (id),
  role_id integer NOT NULL REFERENCES roles (id),
  PRIMARY KEY (user_id, role_id)
);

CREATE TABLE studies (
  id              serial PRIMARY KEY,
  name            text NOT NULL,
  sponsor         text,
  on_hold         boolean NOT NULL DEFAULT false,
  on_hold_reason  text,
  is_noto         boolean NOT NULL DEFAULT false,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE study_access (
  user_id    integer NOT NULL REFERENCES users (id),
  study_id   integer NOT NULL REFERENCES studies (id),
  role_id    integer NOT NULL REFERENCES roles (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, study_id, role_id)
);
CREATE INDEX study_access_study ON study_access (study_id);

CREATE TABLE sessions (
  id           text PRIMARY KEY,            -- sha256 of the cookie token, hex
  user_id      integer NOT NULL REFERENCES users (id),
  csrf_token   text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  ended_at     timestamptz
);
CREATE INDEX sessions_user ON sessions (user_id);

-- Failed login attempts, for throttling (one account from one IP within a window).
CREATE TABLE login_failures (
  id          bigserial PRIMARY KEY,
  username    text NOT NULL,
  ip          text NOT NULL,
  occurred_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX login_failures_lookup ON login_failures (lower(username), ip, occurred_at);

-- The audit trail: append-only and hash-chained. id is the position in the chain, assigned by the
-- audit helper under a transaction-scoped advisory lock, so the chain has no gaps or forks.
CREATE TABLE audit_events (
  id            bigint PRIMARY KEY,
  occurred_at   timestamptz NOT NULL,
  user_id       integer,
  username      text,
  work_as_role  text,
  action        text NOT NULL,
  entity_type   text NOT NULL,
  entity_id     text,
  study_id      integer,
  field         text,
  old_value     text,
  new_value     text,
  reason        text,
  request_id    text,
  client_ip     text,
  prev_hash     text NOT NULL,
  hash          text NOT NULL
);
CREATE INDEX audit_events_study ON audit_events (study_id, occurred_at);
CREATE INDEX audit_events_user ON audit_events (user_id, occurred_at);

CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_events is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;

CREATE TRIGGER audit_events_no_update BEFORE UPDATE OR DELETE ON audit_events
  FOR EACH ROW EXECUTE FUNCTION audit_events_append_only();
CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
  FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only();
