-- Workflow runs (DESIGN §4): each run's snapshot, written compare-and-set on its version, and
-- the work due to runs: an input to apply (a timer that fired, a call that ended, a cancel) or
-- a command to carry out (a child run to start), each at most once per key and run.

CREATE TABLE workflow_states (
    playbook_pk  bigint NOT NULL REFERENCES playbooks (pk),
    run_id       text COLLATE "C" NOT NULL,
    version      bigint NOT NULL,
    state        jsonb NOT NULL,
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (playbook_pk, run_id)
);

CREATE TABLE work (
    id             bigserial PRIMARY KEY,
    playbook_pk    bigint NOT NULL REFERENCES playbooks (pk),
    run_id         text COLLATE "C" NOT NULL,
    key            text COLLATE "C" NOT NULL,
    due_at         timestamptz NOT NULL,
    -- A server that claimed the item holds it until then; past it, another may claim it.
    claimed_until  timestamptz,
    payload        jsonb NOT NULL,
    UNIQUE (playbook_pk, run_id, key)
);

CREATE INDEX work_due_idx ON work (due_at);
