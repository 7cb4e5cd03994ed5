-- A tag type's colour defaults to white, as in Unleash; existing ones without one take it.
UPDATE tag_types SET color = '#FFFFFF' WHERE color IS NULL;
