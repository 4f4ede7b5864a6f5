-- Nothing to change on PostgreSQL. On SQLite's file this migration says a run's and a
-- request's status check as comparisons, since SQLite codes `status IN (a list)` as a
-- temporary B-tree made again for every row it writes; PostgreSQL checks such a list in place.
SELECT 1;
