-- Teams at scale: custom roles made of permissions, groups of users, who holds which role in a
-- project, service accounts with personal access tokens, and the secrets an operator keeps
-- readable under a key of their own.

-- The permissions of a custom role; the built-in roles' are the application's. An environment
-- permission names its environment, the others ''.
CREATE TABLE role_permissions (
    role_id INTEGER NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    permission TEXT NOT NULL,
    environment TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (role_id, permission, environment)
);

CREATE TABLE groups (
    id INTEGER PRIMARY KEY NOT NULL,
    name TEXT NOT NULL UNIQUE,
    description TEXT,
    -- The single sign-on groups whose members it holds: a JSON list of names.
    mappings_sso TEXT NOT NULL DEFAULT '[]',
    root_role_id INTEGER REFERENCES roles (id),
    created_at TIMESTAMP NOT NULL,
    created_by TEXT
);

CREATE TABLE group_users (
    group_id INTEGER NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TIMESTAMP NOT NULL,
    created_by TEXT,
    PRIMARY KEY (group_id, user_id)
);

-- Who holds which role in a project: a user (or service account), or a group.
CREATE TABLE project_access (
    id INTEGER PRIMARY KEY NOT NULL,
    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    role_id INTEGER NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    user_id INTEGER REFERENCES users (id) ON DELETE CASCADE,
    group_id INTEGER REFERENCES groups (id) ON DELETE CASCADE,
    created_at TIMESTAMP NOT NULL,
    CHECK ((user_id IS NULL) <> (group_id IS NULL))
);
CREATE UNIQUE INDEX project_access_users ON project_access (project_id, role_id, user_id) WHERE user_id IS NOT NULL;
CREATE UNIQUE INDEX project_access_groups ON project_access (project_id, role_id, group_id) WHERE group_id IS NOT NULL;
CREATE INDEX project_access_by_user ON project_access (user_id);
CREATE INDEX project_access_by_group ON project_access (group_id);

-- A service account is a user that cannot log in and holds personal access tokens.
ALTER TABLE users ADD COLUMN is_service BOOLEAN NOT NULL DEFAULT FALSE;
-- A custom root role adds its permissions to the built-in root role's (Viewer when it is set).
ALTER TABLE users ADD COLUMN custom_root_role INTEGER REFERENCES roles (id);

-- Personal access tokens: only a SHA-256 verifier of each secret is stored.
CREATE TABLE personal_access_tokens (
    id INTEGER PRIMARY KEY NOT NULL,
    secret_hash TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL,
    user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    expires_at TIMESTAMP NOT NULL,
    created_at TIMESTAMP NOT NULL,
    seen_at TIMESTAMP
);
CREATE INDEX personal_access_tokens_by_user ON personal_access_tokens (user_id);

-- Secrets sealed under the operator's key (never stored here): `api-token:<verifier>` for an
-- API token's secret, `oidc-client-secret` for the OpenID provider's.
CREATE TABLE sealed_secrets (
    owner TEXT PRIMARY KEY NOT NULL,
    sealed TEXT NOT NULL
);
