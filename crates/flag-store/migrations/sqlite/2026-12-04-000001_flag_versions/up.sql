-- The history the playground answers at a past time from: each flag's definition in each
-- environment, and each segment's, with the revisions (audit event ids) between which it held.
-- A row holds from `from_revision` (the newest event of the write that made it) until
-- `to_revision` (that of the write that changed it next), or is current while that is NULL.

CREATE TABLE flag_versions (
    feature TEXT NOT NULL,
    environment TEXT NOT NULL,
    from_revision INTEGER NOT NULL,
    to_revision INTEGER,
    -- Its project then, so that a question limited to projects and ordered as the playground
    -- orders flags is answered by the database.
    project TEXT NOT NULL,
    archived BOOLEAN NOT NULL,
    -- Whether its project had the environment (the flag had a state there).
    in_project BOOLEAN NOT NULL,
    -- The flag as the engine reads it in that environment (JSON).
    body TEXT NOT NULL,
    PRIMARY KEY (feature, environment, from_revision)
);
CREATE INDEX flag_versions_current ON flag_versions (feature, environment) WHERE to_revision IS NULL;
-- Covering what a question at a revision filters on, so that only the rows it answers with are
-- read.
CREATE INDEX flag_versions_from ON flag_versions (environment, from_revision, to_revision, archived, project, feature);

CREATE TABLE segment_versions (
    segment_id INTEGER NOT NULL,
    from_revision INTEGER NOT NULL,
    to_revision INTEGER,
    body TEXT NOT NULL,
    PRIMARY KEY (segment_id, from_revision)
);
CREATE INDEX segment_versions_current ON segment_versions (segment_id) WHERE to_revision IS NULL;

-- Where the history begins: the revision and time of the first complete record (one row).
CREATE TABLE history_start (
    id INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
    revision INTEGER NOT NULL,
    started_at TIMESTAMP NOT NULL
);
