-- The applications view reads each listed application's places and newest instance, not every
-- instance.
CREATE INDEX client_instances_app_last_seen ON client_instances (app_name, last_seen);
CREATE INDEX client_instances_app_scope ON client_instances (app_name, environment, projects);
