-- The events sent to a workflow run with send_run_event (workflow page, "Waiting for events"):
-- each kept under its id, once per run ("An event whose id the run has already received is
-- ignored"), numbered in the order the run received them. The run's snapshot keeps those its
-- listen tasks have not taken yet; this table is the record of what it received.

CREATE TABLE run_inbox (
    playbook_pk  bigint NOT NULL REFERENCES playbooks (pk),
    run_id       text COLLATE "C" NOT NULL,
    event_id     text COLLATE "C" NOT NULL,
    -- Its order among the events the run received, from 1.
    seq          bigint NOT NULL,
    event        jsonb NOT NULL,
    received_at  timestamptz NOT NULL,
    PRIMARY KEY (playbook_pk, run_id, event_id),
    UNIQUE (playbook_pk, run_id, seq)
);
