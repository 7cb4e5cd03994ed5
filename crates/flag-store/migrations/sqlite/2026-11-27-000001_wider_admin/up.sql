-- The wider admin API: feature types with their lifetimes, tags and tag types, each flag's
-- lifecycle, who created a flag and who wrote an event, and deprecated strategy types.

CREATE TABLE feature_types (
    id TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    lifetime_days INTEGER,
    sort_order INTEGER NOT NULL
);

INSERT INTO feature_types (id, name, description, lifetime_days, sort_order) VALUES
    ('release', 'Release', 'Roll out new or incomplete features. Expected lifetime ~40 days', 40, 1),
    ('experiment', 'Experiment', 'A/B and multivariate testing. Expected lifetime ~40 days', 40, 2),
    ('operational', 'Operational', 'Transition between technical implementations with minimal risk. Expected lifetime: ~7 days', 7, 3),
    ('kill-switch', 'Kill switch', 'Quickly disable certain functionalities or features. Expected lifetime: permanent', NULL, 4),
    ('permission', 'Permission', 'Control feature access based on user roles or entitlements. Expected lifetime: permanent', NULL, 5),
    ('sunset', 'Sunset', 'Coordinate the planned removal of an existing feature. Expected lifetime: ~90 days', 90, 6);

CREATE TABLE tag_types (
    name TEXT PRIMARY KEY NOT NULL,
    description TEXT,
    icon TEXT,
    color TEXT,
    created_at TIMESTAMP NOT NULL
);

INSERT INTO tag_types (name, description, icon, color, created_at) VALUES
    ('simple', 'Used to simplify filtering of features', '#', NULL, '2026-01-01 00:00:00');

CREATE TABLE tags (
    tag_type TEXT NOT NULL REFERENCES tag_types (name) ON DELETE CASCADE,
    value TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (tag_type, value)
);

CREATE TABLE feature_tags (
    feature_name TEXT NOT NULL REFERENCES features (name) ON DELETE CASCADE,
    tag_type TEXT NOT NULL,
    tag_value TEXT NOT NULL,
    created_by_user_id INTEGER,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (feature_name, tag_type, tag_value),
    FOREIGN KEY (tag_type, tag_value) REFERENCES tags (tag_type, value) ON DELETE CASCADE
);
CREATE INDEX feature_tags_tag ON feature_tags (tag_type, tag_value);

-- The stages a flag entered, each once: initial, pre-live, live, completed, archived.
CREATE TABLE feature_lifecycles (
    feature_name TEXT NOT NULL REFERENCES features (name) ON DELETE CASCADE,
    stage TEXT NOT NULL,
    status TEXT,
    status_value TEXT,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (feature_name, stage)
);

ALTER TABLE features ADD COLUMN created_by_user_id INTEGER;
ALTER TABLE events ADD COLUMN created_by_user_id INTEGER;
-- The tags of the event's feature when it was written, a JSON list of {value, type}.
ALTER TABLE events ADD COLUMN tags TEXT;
ALTER TABLE strategy_types ADD COLUMN deprecated BOOLEAN NOT NULL DEFAULT FALSE;

CREATE INDEX events_feature_id ON events (feature_name, id);
CREATE INDEX events_project_id ON events (project, id);

-- Which of the web UI's one-time dialogs each user has closed.
CREATE TABLE user_splashes (
    user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    splash_id TEXT NOT NULL,
    seen BOOLEAN NOT NULL DEFAULT TRUE,
    PRIMARY KEY (user_id, splash_id)
);
