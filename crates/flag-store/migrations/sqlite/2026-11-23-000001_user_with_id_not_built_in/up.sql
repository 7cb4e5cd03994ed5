-- Unleash 8 builds in four strategy types: default, flexibleRollout, remoteAddress and
-- applicationHostname. userWithId must be defined before use, like any custom type. A database
-- whose flags already use it keeps the type, now as a defined one, so no strategy loses its type.
UPDATE strategy_types SET built_in = FALSE
WHERE name = 'userWithId'
  AND EXISTS (SELECT 1 FROM feature_strategies WHERE strategy_name = 'userWithId');

DELETE FROM strategy_types WHERE name = 'userWithId' AND built_in;
