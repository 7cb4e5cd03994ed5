-- The admin model. Portable SQL: TEXT, INTEGER, BOOLEAN and TIMESTAMP columns only, JSON kept as
-- TEXT and (de)serialised in Rust, times stored in UTC, no SQLite-only functions in defaults.

CREATE TABLE projects (
    id TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL,
    description TEXT,
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE environments (
    name TEXT PRIMARY KEY NOT NULL,
    environment_type TEXT NOT NULL,
    sort_order INTEGER NOT NULL DEFAULT 0,
    enabled BOOLEAN NOT NULL DEFAULT TRUE,
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE project_environments (
    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    environment_name TEXT NOT NULL REFERENCES environments (name) ON DELETE CASCADE,
    PRIMARY KEY (project_id, environment_name)
);

CREATE TABLE features (
    name TEXT PRIMARY KEY NOT NULL,
    project_id TEXT NOT NULL REFERENCES projects (id),
    feature_type TEXT NOT NULL DEFAULT 'release',
    description TEXT,
    impression_data BOOLEAN NOT NULL DEFAULT FALSE,
    stale BOOLEAN NOT NULL DEFAULT FALSE,
    archived_at TIMESTAMP,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX features_project_id ON features (project_id);

-- A feature's state in one environment: its switch and its variants (a JSON list sorted by name).
CREATE TABLE feature_environments (
    feature_name TEXT NOT NULL REFERENCES features (name) ON DELETE CASCADE,
    environment_name TEXT NOT NULL REFERENCES environments (name) ON DELETE CASCADE,
    enabled BOOLEAN NOT NULL DEFAULT FALSE,
    variants TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (feature_name, environment_name)
);

CREATE TABLE strategy_types (
    name TEXT PRIMARY KEY NOT NULL,
    title TEXT,
    description TEXT,
    parameters TEXT NOT NULL DEFAULT '[]',
    built_in BOOLEAN NOT NULL DEFAULT FALSE,
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE feature_strategies (
    id TEXT PRIMARY KEY NOT NULL,
    feature_name TEXT NOT NULL REFERENCES features (name) ON DELETE CASCADE,
    environment_name TEXT NOT NULL REFERENCES environments (name) ON DELETE CASCADE,
    strategy_name TEXT NOT NULL REFERENCES strategy_types (name),
    title TEXT,
    disabled BOOLEAN NOT NULL DEFAULT FALSE,
    sort_order INTEGER NOT NULL DEFAULT 0,
    parameters TEXT NOT NULL DEFAULT '{}',
    constraints TEXT NOT NULL DEFAULT '[]',
    variants TEXT NOT NULL DEFAULT '[]',
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX feature_strategies_feature_environment ON feature_strategies (feature_name, environment_name);

CREATE TABLE segments (
    id INTEGER PRIMARY KEY NOT NULL,
    name TEXT NOT NULL UNIQUE,
    description TEXT,
    project_id TEXT REFERENCES projects (id) ON DELETE CASCADE,
    constraints TEXT NOT NULL DEFAULT '[]',
    created_by TEXT,
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE feature_strategy_segments (
    strategy_id TEXT NOT NULL REFERENCES feature_strategies (id) ON DELETE CASCADE,
    segment_id INTEGER NOT NULL REFERENCES segments (id),
    PRIMARY KEY (strategy_id, segment_id)
);

-- One parent per child, as in Unleash: adding a dependency replaces the old one.
CREATE TABLE feature_dependencies (
    child TEXT PRIMARY KEY NOT NULL REFERENCES features (name) ON DELETE CASCADE,
    parent TEXT NOT NULL REFERENCES features (name) ON DELETE CASCADE,
    enabled BOOLEAN NOT NULL DEFAULT TRUE,
    variants TEXT NOT NULL DEFAULT '[]'
);

CREATE TABLE context_fields (
    name TEXT PRIMARY KEY NOT NULL,
    description TEXT,
    stickiness BOOLEAN NOT NULL DEFAULT FALSE,
    sort_order INTEGER NOT NULL DEFAULT 0,
    legal_values TEXT NOT NULL DEFAULT '[]',
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE roles (
    id INTEGER PRIMARY KEY NOT NULL,
    name TEXT NOT NULL UNIQUE,
    role_type TEXT NOT NULL,
    description TEXT
);

-- Emails are stored lower-cased, so the unique index makes "one user per email, in any letter
-- case" hold under concurrent signups.
CREATE TABLE users (
    id INTEGER PRIMARY KEY NOT NULL,
    name TEXT,
    username TEXT UNIQUE,
    email TEXT UNIQUE,
    password_hash TEXT,
    root_role INTEGER NOT NULL REFERENCES roles (id),
    login_attempts INTEGER NOT NULL DEFAULT 0,
    created_at TIMESTAMP NOT NULL,
    seen_at TIMESTAMP
);

CREATE TABLE public_signup_tokens (
    secret TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL,
    url TEXT,
    role_id INTEGER NOT NULL REFERENCES roles (id),
    enabled BOOLEAN NOT NULL DEFAULT TRUE,
    expires_at TIMESTAMP NOT NULL,
    created_at TIMESTAMP NOT NULL,
    created_by TEXT
);

CREATE TABLE public_signup_token_users (
    secret TEXT NOT NULL REFERENCES public_signup_tokens (secret) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (secret, user_id)
);

-- Only a SHA-256 verifier of each API token's secret is stored.
CREATE TABLE api_tokens (
    id INTEGER PRIMARY KEY NOT NULL,
    token_name TEXT NOT NULL,
    secret_hash TEXT NOT NULL UNIQUE,
    token_type TEXT NOT NULL,
    environment TEXT NOT NULL,
    projects TEXT NOT NULL DEFAULT '["*"]',
    expires_at TIMESTAMP,
    created_at TIMESTAMP NOT NULL,
    seen_at TIMESTAMP
);

CREATE TABLE login_sessions (
    token_hash TEXT PRIMARY KEY NOT NULL,
    user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TIMESTAMP NOT NULL,
    expires_at TIMESTAMP NOT NULL
);
CREATE INDEX login_sessions_user_id ON login_sessions (user_id);

-- The audit log: one row per write, with the value before (pre_data) and after (data).
CREATE TABLE events (
    id INTEGER PRIMARY KEY NOT NULL,
    event_type TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    project TEXT,
    environment TEXT,
    feature_name TEXT,
    data TEXT,
    pre_data TEXT
);
CREATE INDEX events_feature_environment ON events (feature_name, environment, id);

-- What a fresh Unleash install has.
INSERT INTO roles (id, name, role_type, description) VALUES
    (1, 'Admin', 'root', 'Users with the root admin role have superuser access to Unleash and can perform any operation within the Unleash platform.'),
    (2, 'Editor', 'root', 'Users with the root editor role have access to most features in Unleash, but can not manage users and roles in the root scope.'),
    (3, 'Viewer', 'root', 'Users with the root viewer role can only read root resources in Unleash.'),
    (4, 'Owner', 'project', 'Users with the project owner role have full control over the project.'),
    (5, 'Member', 'project', 'Users with the project member permission allows the user to perform CRUD operations on feature flags within a project.');

INSERT INTO environments (name, environment_type, sort_order, enabled, created_at) VALUES
    ('development', 'development', 100, TRUE, '2026-01-01 00:00:00'),
    ('production', 'production', 200, TRUE, '2026-01-01 00:00:00');

INSERT INTO projects (id, name, description, created_at) VALUES
    ('default', 'Default', 'Default project', '2026-01-01 00:00:00');

INSERT INTO project_environments (project_id, environment_name) VALUES
    ('default', 'development'),
    ('default', 'production');

INSERT INTO strategy_types (name, title, description, parameters, built_in, created_at) VALUES
    ('default', 'Standard', 'The standard strategy is strictly on or off for your entire userbase.', '[]', TRUE, '2026-01-01 00:00:00'),
    ('flexibleRollout', 'Gradual rollout', 'Roll out to a percentage of your userbase, with sticky assignment.', '[{"name":"rollout","type":"percentage","description":"","required":false},{"name":"stickiness","type":"string","description":"Used to define stickiness","required":true},{"name":"groupId","type":"string","description":"","required":true}]', TRUE, '2026-01-01 00:00:00'),
    ('userWithId', 'UserIDs', 'Enable the feature for a specific set of userIds.', '[{"name":"userIds","type":"list","description":"","required":false}]', TRUE, '2026-01-01 00:00:00'),
    ('remoteAddress', 'IPs', 'Enable the feature for a specific set of IP addresses.', '[{"name":"IPs","type":"list","description":"","required":true}]', TRUE, '2026-01-01 00:00:00'),
    ('applicationHostname', 'Hosts', 'Enable the feature for a specific set of hostnames.', '[{"name":"hostNames","type":"list","description":"","required":false}]', TRUE, '2026-01-01 00:00:00');

INSERT INTO context_fields (name, description, stickiness, sort_order, legal_values, created_at) VALUES
    ('environment', 'Allows you to constrain on application environment', FALSE, 0, '[]', '2026-01-01 00:00:00'),
    ('userId', 'Allows you to constrain on userId', FALSE, 1, '[]', '2026-01-01 00:00:00'),
    ('appName', 'Allows you to constrain on application name', FALSE, 2, '[]', '2026-01-01 00:00:00'),
    ('currentTime', 'Allows you to constrain on date values', FALSE, 3, '[]', '2026-01-01 00:00:00'),
    ('sessionId', 'Allows you to constrain on sessionId', TRUE, 4, '[]', '2026-01-01 00:00:00'),
    ('remoteAddress', 'Allows you to constrain on remote address', FALSE, 5, '[]', '2026-01-01 00:00:00');
