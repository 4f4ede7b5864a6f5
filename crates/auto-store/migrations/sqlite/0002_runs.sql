-- Runs: one row per run of a playbook, beside its events in the log. Times and JSON as in
-- 0001 (TEXT, RFC 3339 with a `Z` and milliseconds; JSON as TEXT).

CREATE TABLE runs (
    playbook_pk         INTEGER NOT NULL REFERENCES playbooks (pk),
    run_id              TEXT NOT NULL,
    def_type            TEXT NOT NULL,
    name                TEXT NOT NULL,
    definition_version  INTEGER NOT NULL,
    status              TEXT NOT NULL
                        CHECK (status IN ('started', 'succeeded', 'rejected', 'failed')),
    input               TEXT NOT NULL,
    output              TEXT,
    record              TEXT,
    problem             TEXT,
    started_by          TEXT NOT NULL,
    parent_run_id       TEXT,
    task_reference      TEXT,
    depth               INTEGER,
    call_depth          INTEGER,
    -- What started it, when a trigger did (`trigger` is a keyword).
    trigger_info        TEXT,
    -- 1 for the first attempt; raised each time the run is started again.
    attempt             INTEGER NOT NULL,
    -- The highest run_seq of the run's events, 0 before any.
    last_run_seq        INTEGER NOT NULL,
    -- The database's time of the run's last event: how a run is told still running.
    last_event_at       TEXT NOT NULL,
    started_at          TEXT NOT NULL,
    ended_at            TEXT,
    PRIMARY KEY (playbook_pk, run_id)
) WITHOUT ROWID;

-- list_runs, newest first, with its cursor (started_at, run_id), unfiltered and by
-- type (and name), or by status.
CREATE INDEX runs_list_idx ON runs (playbook_pk, started_at DESC, run_id DESC);
CREATE INDEX runs_definition_idx
    ON runs (playbook_pk, def_type, name, started_at DESC, run_id DESC);
CREATE INDEX runs_status_idx ON runs (playbook_pk, status, started_at DESC, run_id DESC);
