-- The built-in environments go back to their former sort orders unless someone has reordered them.
UPDATE environments SET sort_order = 100 WHERE name = 'development' AND sort_order = 2;
UPDATE environments SET sort_order = 200 WHERE name = 'production' AND sort_order = 3;
