-- Triggers and listening tasks (workflow page, "Triggers", "When a trigger applies", "Trigger
-- limits", "Waiting for events").
--
-- triggers: each saved trigger of each active workflow, by kind (event, cron, every). A save
-- that leaves a trigger as it was keeps its row (its cursor, its due time, its running run) and
-- moves it to the new version; a changed or added one starts again from the save's seq.
CREATE TABLE triggers (
    playbook_pk     INTEGER NOT NULL REFERENCES playbooks (pk),
    workflow        TEXT NOT NULL,
    kind            TEXT NOT NULL CHECK (kind IN ('event', 'cron', 'every')),
    -- The trigger as get_definition shows it: filters, expression or milliseconds.
    spec            TEXT NOT NULL,
    -- The version of the workflow it starts now.
    version         INTEGER NOT NULL,
    -- The seq and time of the record that saved it as it is.
    since_seq       INTEGER NOT NULL,
    saved_at        TEXT NOT NULL,
    -- An event trigger: the last seq it matched.
    cursor_seq      INTEGER NOT NULL,
    -- A schedule: its next due time, once computed.
    due_at          TEXT,
    -- A schedule: the run it started last, which may still run.
    running_run_id  TEXT,
    PRIMARY KEY (playbook_pk, workflow, kind)
) WITHOUT ROWID;

-- The runs an event trigger matched, waiting for its minute's room ("60 a minute a workflow,
-- and 1,000 more waiting"). A start stays after it is taken, for a minute, so the rate is
-- counted here across servers.
CREATE TABLE trigger_starts (
    playbook_pk  INTEGER NOT NULL REFERENCES playbooks (pk),
    run_id       TEXT NOT NULL,
    workflow     TEXT NOT NULL,
    event_seq    INTEGER NOT NULL,
    -- What the run starts with, opaque to the store.
    start        TEXT NOT NULL,
    queued_at    TEXT NOT NULL,
    -- When a server took it to start; NULL while it waits.
    taken_at     TEXT,
    attempts     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (playbook_pk, run_id)
) WITHOUT ROWID;

CREATE INDEX trigger_starts_workflow_idx ON trigger_starts (playbook_pk, workflow, taken_at);

-- Listen tasks whose filters hear the playbook's events while they listen: from the seq after
-- the step that began them, until the step that ends them.
CREATE TABLE listeners (
    playbook_pk  INTEGER NOT NULL REFERENCES playbooks (pk),
    run_id       TEXT NOT NULL,
    reference    TEXT NOT NULL,
    workflow     TEXT NOT NULL,
    version      INTEGER NOT NULL,
    filters      TEXT NOT NULL,
    cursor_seq   INTEGER NOT NULL,
    PRIMARY KEY (playbook_pk, run_id, reference)
) WITHOUT ROWID;
