-- A run's and a request's status checked by comparisons, not `IN (a list)`: SQLite codes a
-- CHECK's `status IN (four words)` as a temporary B-tree of the list, made, filled and dropped
-- again for every row an INSERT writes, as it did the type index's `NOT IN` (0014). A
-- three-call workflow writes four runs, and the four lists were 84K instructions of the
-- writer's 708K a run; four comparisons take the same rows and refuse the same others. SQLite
-- cannot change a CHECK in place, so each table is made again as it is now (the columns of
-- 0002, 0005 and 0010 in their order; those of 0004), its rows copied, and its indexes made
-- again as 0004 and 0012 made them. Nothing references either table.
CREATE TABLE runs_checked (
    playbook_pk         INTEGER NOT NULL REFERENCES playbooks (pk),
    run_id              TEXT NOT NULL,
    def_type            TEXT NOT NULL,
    name                TEXT NOT NULL,
    definition_version  INTEGER NOT NULL,
    status              TEXT NOT NULL
                        CHECK (status = 'started' OR status = 'succeeded'
                               OR status = 'rejected' OR status = 'failed'),
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
    parent_call_id      TEXT,
    root_run_id         TEXT,
    ending_work_key     TEXT,
    ending_work_payload TEXT,
    ending_work_ordered INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (playbook_pk, run_id)
) WITHOUT ROWID;

INSERT INTO runs_checked (playbook_pk, run_id, def_type, name, definition_version, status,
                          input, output, record, problem, started_by, parent_run_id,
                          task_reference, depth, call_depth, trigger_info, attempt,
                          last_run_seq, last_event_at, started_at, ended_at, parent_call_id,
                          root_run_id, ending_work_key, ending_work_payload,
                          ending_work_ordered)
SELECT playbook_pk, run_id, def_type, name, definition_version, status, input, output, record,
       problem, started_by, parent_run_id, task_reference, depth, call_depth, trigger_info,
       attempt, last_run_seq, last_event_at, started_at, ended_at, parent_call_id, root_run_id,
       ending_work_key, ending_work_payload, ending_work_ordered
FROM runs;

DROP TABLE runs;
ALTER TABLE runs_checked RENAME TO runs;

CREATE INDEX runs_list_idx ON runs (playbook_pk, started_at, run_id);
CREATE INDEX runs_definition_idx ON runs (playbook_pk, def_type, name, started_at, run_id);
CREATE INDEX runs_status_idx ON runs (playbook_pk, status, started_at, run_id)
    WHERE status <> 'succeeded';
CREATE INDEX runs_root_idx ON runs (playbook_pk, root_run_id)
    WHERE root_run_id IS NOT NULL AND status = 'started';

CREATE TABLE requests_checked (
    playbook_pk         INTEGER NOT NULL REFERENCES playbooks (pk),
    request_id          TEXT NOT NULL,
    run_id              TEXT NOT NULL,
    def_type            TEXT NOT NULL,
    name                TEXT NOT NULL,
    definition_version  INTEGER NOT NULL,
    to_whom             TEXT NOT NULL,
    message             TEXT NOT NULL,
    input               TEXT NOT NULL,
    output_schema       TEXT,
    status              TEXT NOT NULL
                        CHECK (status = 'open' OR status = 'answered' OR status = 'expired'
                               OR status = 'undelivered' OR status = 'cancelled'),
    created_at          TEXT NOT NULL,
    expires_at          TEXT NOT NULL,
    answered_by         TEXT,
    answer              TEXT,
    closed_at           TEXT,
    PRIMARY KEY (playbook_pk, request_id),
    UNIQUE (playbook_pk, run_id)
) WITHOUT ROWID;

INSERT INTO requests_checked (playbook_pk, request_id, run_id, def_type, name,
                              definition_version, to_whom, message, input, output_schema,
                              status, created_at, expires_at, answered_by, answer, closed_at)
SELECT playbook_pk, request_id, run_id, def_type, name, definition_version, to_whom, message,
       input, output_schema, status, created_at, expires_at, answered_by, answer, closed_at
FROM requests;

DROP TABLE requests;
ALTER TABLE requests_checked RENAME TO requests;

-- list_requests, newest first, with its cursor (created_at, request_id), unfiltered or by
-- status.
CREATE INDEX requests_list_idx ON requests (playbook_pk, created_at DESC, request_id DESC);
CREATE INDEX requests_status_idx
    ON requests (playbook_pk, status, created_at DESC, request_id DESC);
