-- The applications view reads each listed application's newest instance, not every instance.
CREATE INDEX client_instances_app_last_seen ON client_instances (app_name, last_seen);
