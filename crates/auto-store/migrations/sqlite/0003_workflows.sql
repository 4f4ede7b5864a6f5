-- Workflow runs (DESIGN §4): each run's snapshot, written compare-and-set on its version, and
-- the work due to runs: an input to apply (a timer that fired, a call that ended, a cancel) or
-- a command to carry out (a child run to start), each at most once per key and run.

CREATE TABLE workflow_states (
    playbook_pk  INTEGER NOT NULL REFERENCES playbooks (pk),
    run_id       TEXT NOT NULL,
    version      INTEGER NOT NULL,
    state        TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    PRIMARY KEY (playbook_pk, run_id)
) WITHOUT ROWID;

CREATE TABLE work (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    playbook_pk    INTEGER NOT NULL REFERENCES playbooks (pk),
    run_id         TEXT NOT NULL,
    key            TEXT NOT NULL,
    due_at         TEXT NOT NULL,
    -- A server that claimed the item holds it until then; past it, another may claim it.
    claimed_until  TEXT,
    payload        TEXT NOT NULL,
    UNIQUE (playbook_pk, run_id, key)
);

CREATE INDEX work_due_idx ON work (due_at);
