ALTER TABLE feature_environments DROP COLUMN last_seen_at;
DROP TABLE settings;
DROP TABLE unknown_flags;
DROP TABLE client_usage;
DROP TABLE client_instances;
DROP TABLE client_applications;
