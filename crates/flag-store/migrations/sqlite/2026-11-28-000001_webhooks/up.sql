-- Webhooks: Unleash's addons, what each delivery did, and which audit events have been handed to
-- them. Events already in the log are announced: a new webhook hears only what happens after it.

CREATE TABLE addons (
    id INTEGER PRIMARY KEY NOT NULL,
    provider TEXT NOT NULL,
    description TEXT,
    enabled BOOLEAN NOT NULL,
    parameters TEXT NOT NULL,
    events TEXT NOT NULL,
    projects TEXT NOT NULL,
    environments TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE integration_events (
    id INTEGER PRIMARY KEY NOT NULL,
    integration_id INTEGER NOT NULL REFERENCES addons (id) ON DELETE CASCADE,
    created_at TIMESTAMP NOT NULL,
    state TEXT NOT NULL,
    state_details TEXT NOT NULL,
    event TEXT NOT NULL,
    details TEXT NOT NULL
);

CREATE INDEX integration_events_integration ON integration_events (integration_id, id);

ALTER TABLE events ADD COLUMN announced BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE events SET announced = TRUE;
CREATE INDEX events_unannounced ON events (id) WHERE announced = FALSE;
