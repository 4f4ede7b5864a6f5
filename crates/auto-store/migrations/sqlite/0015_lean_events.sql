-- An event that says nothing the row does not say already is not written twice: a `source`
-- that is its run's own (`/runs/<run_id>`) and a `time` the caller did not give (the time it
-- was recorded) are kept as NULL, and the store reads them back as those (`rows::event_from_row`).
-- A workflow's events are nearly all such, and the two were a fifth of an event's row. SQLite
-- cannot drop a column's NOT NULL, so the table is made again, its rows copied lean, and its
-- indexes made again as 0001 and 0014 made them.
CREATE TABLE events_lean (
    playbook_pk      INTEGER NOT NULL REFERENCES playbooks (pk),
    seq              INTEGER NOT NULL,
    id               TEXT NOT NULL,
    type             TEXT NOT NULL,
    source           TEXT,
    subject          TEXT,
    time             TEXT,
    datacontenttype  TEXT,
    data             TEXT,
    extensions       TEXT NOT NULL,
    run_id           TEXT,
    run_seq          INTEGER,
    recorded_at      TEXT NOT NULL,
    PRIMARY KEY (playbook_pk, seq),
    UNIQUE (playbook_pk, id)
) WITHOUT ROWID;

INSERT INTO events_lean
SELECT playbook_pk, seq, id, type,
       CASE WHEN run_id IS NOT NULL AND source = '/runs/' || run_id THEN NULL ELSE source END,
       subject,
       CASE WHEN time = recorded_at THEN NULL ELSE time END,
       datacontenttype, data, extensions, run_id, run_seq, recorded_at
FROM events;

DROP TABLE events;
ALTER TABLE events_lean RENAME TO events;

CREATE UNIQUE INDEX events_run_seq_key ON events (playbook_pk, run_id, run_seq)
    WHERE run_id IS NOT NULL AND run_seq IS NOT NULL;
CREATE INDEX events_run_idx ON events (playbook_pk, run_id, seq) WHERE run_id IS NOT NULL;
CREATE INDEX events_type_idx ON events (playbook_pk, type, seq)
    WHERE type <> 'run_started' AND type <> 'run_succeeded' AND type <> 'step_started'
      AND type <> 'step_completed' AND type <> 'call_started' AND type <> 'call_ended'
      AND type <> 'model_call_started' AND type <> 'model_call_answered'
      AND type <> 'tool_call_started' AND type <> 'tool_call_answered'
      AND type <> 'wait_started' AND type <> 'wait_ended';
