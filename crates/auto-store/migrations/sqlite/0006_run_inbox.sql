-- The events sent to a workflow run with send_run_event (workflow page, "Waiting for events"):
-- each kept under its id, once per run ("An event whose id the run has already received is
-- ignored"), numbered in the order the run received them. The run's snapshot keeps those its
-- listen tasks have not taken yet; this table is the record of what it received.

CREATE TABLE run_inbox (
    playbook_pk  INTEGER NOT NULL REFERENCES playbooks (pk),
    run_id       TEXT NOT NULL,
    event_id     TEXT NOT NULL,
    -- Its order among the events the run received, from 1.
    seq          INTEGER NOT NULL,
    event        TEXT NOT NULL,
    received_at  TEXT NOT NULL,
    PRIMARY KEY (playbook_pk, run_id, event_id),
    UNIQUE (playbook_pk, run_id, seq)
) WITHOUT ROWID;
