-- Electronic signatures by single sign-on accounts (issue 30, docs/COMPLIANCE.md): an account
-- without a Lamina password signs by signing in again at its identity provider (prompt=login,
-- max_age=0). The callback stamps the session; the next signature within five minutes uses the
-- stamp, once (signatureService.ts clears it).
ALTER TABLE sessions ADD COLUMN signature_auth_at timestamptz;

COMMENT ON COLUMN sessions.signature_auth_at IS
  'When the session''s user last signed in again at the identity provider to sign (issue 30); cleared by the signature that uses it.';
