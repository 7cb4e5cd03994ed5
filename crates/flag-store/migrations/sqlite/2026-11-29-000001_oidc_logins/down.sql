ALTER TABLE login_sessions DROP COLUMN via_oidc;
DROP TABLE oidc_logins;
