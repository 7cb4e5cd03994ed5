-- Switch events get back the state before and after that they used to record, and variants
-- updates their bare lists.
UPDATE events SET data = '{"enabled":true}', pre_data = '{"enabled":false}'
    WHERE event_type = 'feature-environment-enabled';
UPDATE events SET data = '{"enabled":false}', pre_data = '{"enabled":true}'
    WHERE event_type = 'feature-environment-disabled';
UPDATE events SET data = substr(data, 13, length(data) - 13)
    WHERE event_type = 'feature-environment-variants-updated' AND data LIKE '{"variants":%';
UPDATE events SET pre_data = substr(pre_data, 13, length(pre_data) - 13)
    WHERE event_type = 'feature-environment-variants-updated' AND pre_data LIKE '{"variants":%';

DROP INDEX events_group_id;
ALTER TABLE events DROP COLUMN group_id;
ALTER TABLE events DROP COLUMN group_type;
