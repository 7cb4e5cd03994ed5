-- The ID token of a session opened through the OpenID provider, kept while single sign-out is on
-- so that signing out can send it to the provider's end-session endpoint as `id_token_hint`
-- (Okta requires it). It never leaves the server but on that way to the provider. A session that
-- has ended keeps it a few minutes under a one-time handle, for the page that goes on to the
-- provider; signing out forgets the sessions that expired before that.
ALTER TABLE login_sessions ADD COLUMN id_token TEXT COLLATE "C";
CREATE INDEX login_sessions_expires_at ON login_sessions (expires_at);
