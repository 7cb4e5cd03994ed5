-- The colours stay: a type given white on purpose cannot be told from one that took the default.
SELECT 1;
