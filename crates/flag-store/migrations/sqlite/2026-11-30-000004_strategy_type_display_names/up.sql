-- Unleash 8 stores a display name and a sort order with each strategy type and lists the types by
-- sort order, then name. Its four built-in types carry the display names, sort orders,
-- descriptions and parameter descriptions its migrations seed, and no title; custom types have
-- no display name and sort after them (9999, its column default).
ALTER TABLE strategy_types ADD COLUMN display_name TEXT;
ALTER TABLE strategy_types ADD COLUMN sort_order INTEGER NOT NULL DEFAULT 9999;

UPDATE strategy_types
SET display_name = 'Gradual rollout', sort_order = 0, title = NULL,
    description = 'Roll out to a percentage of your userbase, and ensure that the experience is the same for the user on each visit.',
    parameters = '[{"name":"rollout","type":"percentage","description":"","required":false},{"name":"stickiness","type":"string","description":"Used define stickiness. Possible values: default, userId, sessionId, random","required":true},{"name":"groupId","type":"string","description":"Used to define a activation groups, which allows you to correlate across feature toggles.","required":true}]'
WHERE name = 'flexibleRollout' AND built_in;
UPDATE strategy_types
SET display_name = 'Standard', sort_order = 1, title = NULL,
    description = 'This strategy turns on / off for your entire userbase. Prefer using "Gradual rollout" strategy (100%=on, 0%=off).',
    parameters = '[]'
WHERE name = 'default' AND built_in;
UPDATE strategy_types
SET display_name = 'IPs', sort_order = 3, title = NULL,
    description = 'Enable the feature for a specific set of IP addresses.',
    parameters = '[{"name":"IPs","type":"list","description":"List of IPs to enable the feature toggle for.","required":true}]'
WHERE name = 'remoteAddress' AND built_in;
UPDATE strategy_types
SET display_name = 'Hosts', sort_order = 4, title = NULL,
    description = 'Enable the feature for a specific set of hostnames.',
    parameters = '[{"name":"hostNames","type":"list","description":"List of hostnames to enable the feature toggle for.","required":false}]'
WHERE name = 'applicationHostname' AND built_in;
