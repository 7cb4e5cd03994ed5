-- The numbers are not kept: the names stay `admin`.
SELECT 1;
