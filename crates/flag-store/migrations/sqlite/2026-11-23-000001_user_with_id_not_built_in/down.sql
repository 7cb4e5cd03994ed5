INSERT INTO strategy_types (name, title, description, parameters, built_in, created_at)
SELECT 'userWithId', 'UserIDs', 'Enable the feature for a specific set of userIds.',
       '[{"name":"userIds","type":"list","description":"","required":false}]', TRUE, '2026-01-01 00:00:00'
WHERE NOT EXISTS (SELECT 1 FROM strategy_types WHERE name = 'userWithId');
UPDATE strategy_types SET built_in = TRUE WHERE name = 'userWithId';
