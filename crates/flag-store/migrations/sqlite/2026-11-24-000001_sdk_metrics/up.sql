-- What SDKs report: the applications and instances that registered or sent metrics, flag usage
-- per hour, names SDKs asked for that no flag has, and when each flag was last used in each
-- environment. The server aggregates reports in memory and writes them here in batches.

CREATE TABLE client_applications (
    app_name TEXT PRIMARY KEY NOT NULL,
    -- The strategies the first registration named, a JSON list.
    strategies TEXT NOT NULL DEFAULT '[]',
    description TEXT,
    url TEXT,
    color TEXT,
    icon TEXT,
    created_at TIMESTAMP NOT NULL,
    seen_at TIMESTAMP NOT NULL
);
CREATE INDEX client_applications_seen_at ON client_applications (seen_at);

CREATE TABLE client_instances (
    app_name TEXT NOT NULL,
    instance_id TEXT NOT NULL,
    environment TEXT NOT NULL,
    sdk_version TEXT,
    -- `backend` or `frontend`.
    sdk_type TEXT NOT NULL,
    client_ip TEXT,
    -- The projects of the token it reported with, a JSON list; `["*"]` for all.
    projects TEXT NOT NULL DEFAULT '["*"]',
    started TIMESTAMP,
    -- The SDK's poll interval, in milliseconds.
    interval_ms BIGINT,
    created_at TIMESTAMP NOT NULL,
    last_seen TIMESTAMP NOT NULL,
    PRIMARY KEY (app_name, instance_id, environment)
);
CREATE INDEX client_instances_last_seen ON client_instances (last_seen);

-- Evaluations of a flag by an application in an environment, in the hour starting at `hour`.
CREATE TABLE client_usage (
    feature_name TEXT NOT NULL,
    app_name TEXT NOT NULL,
    environment TEXT NOT NULL,
    hour TIMESTAMP NOT NULL,
    yes BIGINT NOT NULL,
    no BIGINT NOT NULL,
    -- Counts by variant name, a JSON object.
    variants TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (feature_name, app_name, environment, hour)
);
CREATE INDEX client_usage_hour ON client_usage (hour);
CREATE INDEX client_usage_app_name ON client_usage (app_name, hour);

CREATE TABLE unknown_flags (
    name TEXT NOT NULL,
    app_name TEXT NOT NULL,
    environment TEXT NOT NULL,
    seen_at TIMESTAMP NOT NULL,
    PRIMARY KEY (name, app_name, environment)
);
CREATE INDEX unknown_flags_seen_at ON unknown_flags (seen_at);

-- Server-wide settings by name, each a JSON document (the frontend API's CORS origins).
CREATE TABLE settings (
    name TEXT PRIMARY KEY NOT NULL,
    content TEXT NOT NULL
);

ALTER TABLE feature_environments ADD COLUMN last_seen_at TIMESTAMP;
