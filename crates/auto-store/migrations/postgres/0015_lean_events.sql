-- An event that says nothing the row does not say already is not written twice: a `source`
-- that is its run's own (`/runs/<run_id>`) and a `time` the caller did not give (the time it
-- was recorded) are kept as NULL, and the store reads them back as those
-- (`rows::event_from_row`), as on SQLite. The rows written before stay whole, which reads the
-- same; only the NOT NULLs go.
ALTER TABLE events ALTER COLUMN source DROP NOT NULL, ALTER COLUMN time DROP NOT NULL;
