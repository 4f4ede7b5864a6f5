-- Nothing to change on PostgreSQL: this number is SQLite's `events_type_idx` condition written
-- as a chain of comparisons (its `NOT IN` list was a temporary B-tree built for every event
-- inserted). PostgreSQL tests `NOT IN` against the constant array in place, so its index stays
-- as migration 0012 made it.
SELECT 1;
