-- The store on PostgreSQL: orgs, playbooks, definitions with every version, and each
-- playbook's event log. Ids and names compare byte by byte (COLLATE "C"), as on SQLite, so both
-- stores list in the same order.

CREATE TABLE orgs (
    id          text COLLATE "C" PRIMARY KEY,
    title       text,
    created_at  timestamptz NOT NULL
);

CREATE TABLE playbooks (
    pk          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    org         text COLLATE "C" NOT NULL REFERENCES orgs (id),
    id          text COLLATE "C" NOT NULL,
    title       text,
    created_at  timestamptz NOT NULL,
    -- The seq of the playbook's last event. An append takes the row's lock by raising it, and
    -- holds it to its commit: appends to one playbook commit in seq order.
    last_seq    bigint NOT NULL DEFAULT 0,
    UNIQUE (org, id)
);

CREATE TABLE definitions (
    pk              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    playbook_pk     bigint NOT NULL REFERENCES playbooks (pk),
    def_type        text COLLATE "C" NOT NULL,
    name            text COLLATE "C" NOT NULL,
    status          text NOT NULL CHECK (status IN ('active', 'retired')),
    latest_version  bigint NOT NULL,
    created_at      timestamptz NOT NULL,
    -- When the latest version was saved, or the definition retired.
    updated_at      timestamptz NOT NULL,
    -- The seq of the event that retired it.
    retired_seq     bigint,
    UNIQUE (playbook_pk, def_type, name)
);

CREATE TABLE definition_versions (
    definition_pk   bigint NOT NULL REFERENCES definitions (pk),
    version         bigint NOT NULL,
    source          text NOT NULL,
    overview        text,
    diagram         text NOT NULL,
    description     text,
    derived         jsonb NOT NULL,
    saved_seq       bigint NOT NULL,
    saved_at        timestamptz NOT NULL,
    PRIMARY KEY (definition_pk, version)
);

CREATE TABLE events (
    playbook_pk      bigint NOT NULL REFERENCES playbooks (pk),
    seq              bigint NOT NULL,
    id               text COLLATE "C" NOT NULL,
    type             text COLLATE "C" NOT NULL,
    source           text NOT NULL,
    subject          text,
    time             timestamptz NOT NULL,
    datacontenttype  text,
    data             jsonb,
    extensions       jsonb NOT NULL,
    run_id           text COLLATE "C",
    run_seq          bigint,
    recorded_at      timestamptz NOT NULL,
    CONSTRAINT events_pkey PRIMARY KEY (playbook_pk, seq),
    CONSTRAINT events_id_key UNIQUE (playbook_pk, id)
);

-- "An event is recorded only under the next number": a run's numbers are unique.
CREATE UNIQUE INDEX events_run_seq_key ON events (playbook_pk, run_id, run_seq)
    WHERE run_id IS NOT NULL AND run_seq IS NOT NULL;
-- list_events by run and by type, in seq order.
CREATE INDEX events_run_idx ON events (playbook_pk, run_id, seq) WHERE run_id IS NOT NULL;
CREATE INDEX events_type_idx ON events (playbook_pk, type, seq);
