DROP INDEX events_creator;
DROP INDEX events_created;
