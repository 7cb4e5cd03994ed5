-- Events written together in one transaction share a group, as Unleash groups them: its
-- `group_type` (`transaction`) and `group_id` (a ULID), both null for an event written alone.
ALTER TABLE events ADD COLUMN group_type TEXT COLLATE "C";
ALTER TABLE events ADD COLUMN group_id TEXT COLLATE "C";
CREATE INDEX events_group_id ON events (group_id, id) WHERE group_id IS NOT NULL;

-- Unleash records a variants update as `{"variants": [...]}`, before and after, and switching a
-- flag on or off in an environment without any data: the old rows take the same shape.
UPDATE events SET data = '{"variants":' || data || '}'
    WHERE event_type = 'feature-environment-variants-updated' AND data LIKE '[%';
UPDATE events SET pre_data = '{"variants":' || pre_data || '}'
    WHERE event_type = 'feature-environment-variants-updated' AND pre_data LIKE '[%';
UPDATE events SET data = NULL, pre_data = NULL
    WHERE event_type IN ('feature-environment-enabled', 'feature-environment-disabled');
