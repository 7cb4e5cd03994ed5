-- A project's settings: who may see it (`open`, `protected`, `private`), the pattern its flag
-- names must match, and the links its flags show.
ALTER TABLE projects ADD COLUMN mode TEXT NOT NULL DEFAULT 'open';
-- JSON `{pattern, example, description}`, or NULL.
ALTER TABLE projects ADD COLUMN feature_naming TEXT;
-- JSON `[{title, urlTemplate}]`.
ALTER TABLE projects ADD COLUMN link_templates TEXT NOT NULL DEFAULT '[]';
