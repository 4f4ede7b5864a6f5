-- Triggers and listening tasks (workflow page, "Triggers", "When a trigger applies", "Trigger
-- limits", "Waiting for events").
--
-- triggers: each saved trigger of each active workflow, by kind (event, cron, every). A save
-- that leaves a trigger as it was keeps its row (its cursor, its due time, its running run) and
-- moves it to the new version; a changed or added one starts again from the save's seq.
CREATE TABLE triggers (
    playbook_pk     bigint NOT NULL REFERENCES playbooks (pk),
    workflow        text COLLATE "C" NOT NULL,
    kind            text NOT NULL CHECK (kind IN ('event', 'cron', 'every')),
    -- The trigger as get_definition shows it: filters, expression or milliseconds.
    spec            jsonb NOT NULL,
    -- The version of the workflow it starts now.
    version         bigint NOT NULL,
    -- The seq and time of the record that saved it as it is.
    since_seq       bigint NOT NULL,
    saved_at        timestamptz NOT NULL,
    -- An event trigger: the last seq it matched.
    cursor_seq      bigint NOT NULL,
    -- A schedule: its next due time, once computed.
    due_at          timestamptz,
    -- A schedule: the run it started last, which may still run.
    running_run_id  text COLLATE "C",
    PRIMARY KEY (playbook_pk, workflow, kind)
);

-- The runs an event trigger matched, waiting for its minute's room ("60 a minute a workflow,
-- and 1,000 more waiting"). A start stays after it is taken, for a minute, so the rate is
-- counted here across servers.
CREATE TABLE trigger_starts (
    playbook_pk  bigint NOT NULL REFERENCES playbooks (pk),
    run_id       text COLLATE "C" NOT NULL,
    workflow     text COLLATE "C" NOT NULL,
    event_seq    bigint NOT NULL,
    -- What the run starts with, opaque to the store.
    start        jsonb NOT NULL,
    queued_at    timestamptz NOT NULL,
    -- When a server took it to start; NULL while it waits.
    taken_at     timestamptz,
    attempts     bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (playbook_pk, run_id)
);

CREATE INDEX trigger_starts_workflow_idx ON trigger_starts (playbook_pk, workflow, taken_at);

-- Listen tasks whose filters hear the playbook's events while they listen: from the seq after
-- the step that began them, until the step that ends them.
CREATE TABLE listeners (
    playbook_pk  bigint NOT NULL REFERENCES playbooks (pk),
    run_id       text COLLATE "C" NOT NULL,
    reference    text COLLATE "C" NOT NULL,
    workflow     text COLLATE "C" NOT NULL,
    version      bigint NOT NULL,
    filters      jsonb NOT NULL,
    cursor_seq   bigint NOT NULL,
    PRIMARY KEY (playbook_pk, run_id, reference)
);
