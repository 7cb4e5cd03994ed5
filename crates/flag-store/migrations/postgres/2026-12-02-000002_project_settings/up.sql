-- As the SQLite migration of the same version. A project's settings: who may see it (`open`, `protected`, `private`), the pattern its flag
-- names must match, and the links its flags show.
ALTER TABLE projects ADD COLUMN mode TEXT COLLATE "C" NOT NULL DEFAULT 'open';
-- JSON `{pattern, example, description}`, or NULL.
ALTER TABLE projects ADD COLUMN feature_naming TEXT COLLATE "C";
-- JSON `[{title, urlTemplate}]`.
ALTER TABLE projects ADD COLUMN link_templates TEXT COLLATE "C" NOT NULL DEFAULT '[]';
