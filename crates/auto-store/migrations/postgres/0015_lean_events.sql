-- An event's `source` and `time` may be NULL, read back as its run's own source
-- (`/runs/<run_id>`) and the time it was recorded (`rows::event_from_row`), as on SQLite, where
-- the store writes them so. Here the store still writes them whole; the rows stay as they are.
ALTER TABLE events ALTER COLUMN source DROP NOT NULL, ALTER COLUMN time DROP NOT NULL;
