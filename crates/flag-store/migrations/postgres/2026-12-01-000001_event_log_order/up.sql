-- The audit log is read newest first (`created_at`, then `id`) and paged; and who wrote it is
-- listed for its filter. Both read an index rather than sorting or scanning the whole log.
CREATE INDEX events_created ON events (created_at, id);
CREATE INDEX events_creator ON events (created_by_user_id, created_by);
