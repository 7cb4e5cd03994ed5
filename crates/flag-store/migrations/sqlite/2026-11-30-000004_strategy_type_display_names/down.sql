-- The built-in types get back the titles, descriptions and parameters the first migration gave them.
UPDATE strategy_types
SET title = 'Gradual rollout',
    description = 'Roll out to a percentage of your userbase, with sticky assignment.',
    parameters = '[{"name":"rollout","type":"percentage","description":"","required":false},{"name":"stickiness","type":"string","description":"Used to define stickiness","required":true},{"name":"groupId","type":"string","description":"","required":true}]'
WHERE name = 'flexibleRollout' AND built_in;
UPDATE strategy_types
SET title = 'Standard',
    description = 'The standard strategy is strictly on or off for your entire userbase.',
    parameters = '[]'
WHERE name = 'default' AND built_in;
UPDATE strategy_types
SET title = 'IPs',
    description = 'Enable the feature for a specific set of IP addresses.',
    parameters = '[{"name":"IPs","type":"list","description":"","required":true}]'
WHERE name = 'remoteAddress' AND built_in;
UPDATE strategy_types
SET title = 'Hosts',
    description = 'Enable the feature for a specific set of hostnames.',
    parameters = '[{"name":"hostNames","type":"list","description":"","required":false}]'
WHERE name = 'applicationHostname' AND built_in;
ALTER TABLE strategy_types DROP COLUMN sort_order;
ALTER TABLE strategy_types DROP COLUMN display_name;
