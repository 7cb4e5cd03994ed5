DROP INDEX login_sessions_expires_at;
ALTER TABLE login_sessions DROP COLUMN id_token;
