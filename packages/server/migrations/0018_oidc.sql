-- Single sign-on with OpenID Connect (issue 19; docs/DEPLOYMENT.md "Single sign-on"): a session
-- records how it was opened, and an OpenID Connect session keeps the provider's ID token, sent
-- back as id_token_hint when the user logs out at the provider. Forward-only; never edited after
-- it lands.

ALTER TABLE sessions
  ADD COLUMN auth_method text NOT NULL DEFAULT 'password' CHECK (auth_method IN ('password', 'oidc')),
  ADD COLUMN id_token text;
