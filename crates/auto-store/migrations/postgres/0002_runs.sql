-- Runs: one row per run of a playbook, beside its events in the log. Ids and names compare
-- byte by byte (COLLATE "C"), as on SQLite, so both stores list runs in the same order.

CREATE TABLE runs (
    playbook_pk         bigint NOT NULL REFERENCES playbooks (pk),
    run_id              text COLLATE "C" NOT NULL,
    def_type            text COLLATE "C" NOT NULL,
    name                text COLLATE "C" NOT NULL,
    definition_version  bigint NOT NULL,
    status              text NOT NULL
                        CHECK (status IN ('started', 'succeeded', 'rejected', 'failed')),
    input               jsonb NOT NULL,
    output              jsonb,
    record              jsonb,
    problem             jsonb,
    started_by          text NOT NULL,
    parent_run_id       text COLLATE "C",
    task_reference      text,
    depth               bigint,
    call_depth          bigint,
    -- What started it, when a trigger did (named as on SQLite, where `trigger` is a keyword).
    trigger_info        jsonb,
    -- 1 for the first attempt; raised each time the run is started again.
    attempt             bigint NOT NULL,
    -- The highest run_seq of the run's events, 0 before any.
    last_run_seq        bigint NOT NULL,
    -- The database's time (clock_timestamp()) of the run's last event: how a run is told still
    -- running.
    last_event_at       timestamptz NOT NULL,
    started_at          timestamptz NOT NULL,
    ended_at            timestamptz,
    CONSTRAINT runs_pkey PRIMARY KEY (playbook_pk, run_id)
);

-- list_runs, newest first, with its cursor (started_at, run_id), unfiltered and by
-- type (and name), or by status.
CREATE INDEX runs_list_idx ON runs (playbook_pk, started_at DESC, run_id DESC);
CREATE INDEX runs_definition_idx
    ON runs (playbook_pk, def_type, name, started_at DESC, run_id DESC);
CREATE INDEX runs_status_idx ON runs (playbook_pk, status, started_at DESC, run_id DESC);
