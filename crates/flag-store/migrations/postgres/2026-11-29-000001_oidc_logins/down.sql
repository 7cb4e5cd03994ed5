DROP TABLE oidc_logins;
