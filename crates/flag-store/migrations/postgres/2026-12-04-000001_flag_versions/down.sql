DROP TABLE history_start;
DROP TABLE segment_versions;
DROP TABLE flag_versions;
