-- Unleash numbers its environments 1, 2, 3 in display order (its migration fix-env-sort-order)
-- and new installs then drop the old `default` environment, so `development` sorts 2 and
-- `production` 3. The built-in environments move there unless someone has reordered them.
UPDATE environments SET sort_order = 2 WHERE name = 'development' AND sort_order = 100;
UPDATE environments SET sort_order = 3 WHERE name = 'production' AND sort_order = 200;
