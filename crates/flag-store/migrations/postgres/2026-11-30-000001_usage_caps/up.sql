-- The store keeps at most so many unknown flag names per environment, evicting the least
-- recently seen: this index gives each environment's names newest first, so the eviction walks
-- only the rows it keeps and deletes the rest.
CREATE INDEX unknown_flags_environment_seen_at ON unknown_flags (environment, seen_at);
