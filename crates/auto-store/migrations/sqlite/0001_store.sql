-- The store on SQLite: orgs, playbooks, definitions with every version, and each playbook's
-- event log. Times are TEXT in RFC 3339 with a `Z` (from strftime('%Y-%m-%dT%H:%M:%fZ')), JSON
-- is TEXT.

CREATE TABLE orgs (
    id          TEXT PRIMARY KEY,
    title       TEXT,
    created_at  TEXT NOT NULL
);

CREATE TABLE playbooks (
    pk          INTEGER PRIMARY KEY,
    org         TEXT NOT NULL REFERENCES orgs (id),
    id          TEXT NOT NULL,
    title       TEXT,
    created_at  TEXT NOT NULL,
    -- The seq of the playbook's last event: the next append takes last_seq + 1 onwards.
    last_seq    INTEGER NOT NULL DEFAULT 0,
    UNIQUE (org, id)
);

CREATE TABLE definitions (
    pk              INTEGER PRIMARY KEY,
    playbook_pk     INTEGER NOT NULL REFERENCES playbooks (pk),
    def_type        TEXT NOT NULL,
    name            TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('active', 'retired')),
    latest_version  INTEGER NOT NULL,
    created_at      TEXT NOT NULL,
    -- When the latest version was saved, or the definition retired.
    updated_at      TEXT NOT NULL,
    -- The seq of the event that retired it.
    retired_seq     INTEGER,
    UNIQUE (playbook_pk, def_type, name)
);

CREATE TABLE definition_versions (
    definition_pk   INTEGER NOT NULL REFERENCES definitions (pk),
    version         INTEGER NOT NULL,
    source          TEXT NOT NULL,
    overview        TEXT,
    diagram         TEXT NOT NULL,
    description     TEXT,
    derived         TEXT NOT NULL,
    saved_seq       INTEGER NOT NULL,
    saved_at        TEXT NOT NULL,
    PRIMARY KEY (definition_pk, version)
) WITHOUT ROWID;

CREATE TABLE events (
    playbook_pk      INTEGER NOT NULL REFERENCES playbooks (pk),
    seq              INTEGER NOT NULL,
    id               TEXT NOT NULL,
    type             TEXT NOT NULL,
    source           TEXT NOT NULL,
    subject          TEXT,
    time             TEXT NOT NULL,
    datacontenttype  TEXT,
    data             TEXT,
    extensions       TEXT NOT NULL,
    run_id           TEXT,
    run_seq          INTEGER,
    recorded_at      TEXT NOT NULL,
    PRIMARY KEY (playbook_pk, seq),
    UNIQUE (playbook_pk, id)
) WITHOUT ROWID;

-- "An event is recorded only under the next number": a run's numbers are unique.
CREATE UNIQUE INDEX events_run_seq_key ON events (playbook_pk, run_id, run_seq)
    WHERE run_id IS NOT NULL AND run_seq IS NOT NULL;
-- list_events by run and by type, in seq order.
CREATE INDEX events_run_idx ON events (playbook_pk, run_id, seq) WHERE run_id IS NOT NULL;
CREATE INDEX events_type_idx ON events (playbook_pk, type, seq);
