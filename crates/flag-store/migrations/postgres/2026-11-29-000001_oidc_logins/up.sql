-- Logins through an OpenID provider that have started and not yet come back: what the callback
-- checks (the state, the nonce, the PKCE verifier) under the hash of the browser's cookie, so the
-- callback may reach any replica. Each is taken once, and is kept ten minutes at most.

CREATE TABLE oidc_logins (
    cookie_hash TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    state TEXT COLLATE "C" NOT NULL,
    nonce TEXT COLLATE "C" NOT NULL,
    pkce_verifier TEXT COLLATE "C" NOT NULL,
    return_to TEXT COLLATE "C" NOT NULL,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX oidc_logins_created_at ON oidc_logins (created_at);

-- Whether a session was opened through the provider: only those sign out there too.
ALTER TABLE login_sessions ADD COLUMN via_oidc BOOLEAN NOT NULL DEFAULT FALSE;
