ALTER TABLE projects DROP COLUMN link_templates;
ALTER TABLE projects DROP COLUMN feature_naming;
ALTER TABLE projects DROP COLUMN mode;
