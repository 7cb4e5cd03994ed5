DROP INDEX events_unannounced;
ALTER TABLE events DROP COLUMN announced;
DROP INDEX integration_events_integration;
DROP TABLE integration_events;
DROP TABLE addons;
