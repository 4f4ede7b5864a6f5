-- Recall functions' views: one row for each recall function of a playbook, of the version
-- whose view it is. `folded_seq` is the last seq of the log the view has met (every event
-- after it is still to fold); `built` turns true once it has caught up with the log the first
-- time; `stalled` names the event a fold threw at and the error. Each change raises
-- `revision`, which a writer names to change the row only as it read it. `held_by` is
-- the server that folds the view until `held_until`: one server at a time.
CREATE TABLE views (
    playbook_pk  bigint NOT NULL REFERENCES playbooks (pk),
    name         text COLLATE "C" NOT NULL,
    version      bigint NOT NULL,
    revision     bigint NOT NULL,
    view         jsonb NOT NULL,
    folded_seq   bigint NOT NULL,
    built        boolean NOT NULL,
    stalled      jsonb,
    updated_at   timestamptz NOT NULL,
    held_by      text,
    held_until   timestamptz,
    CONSTRAINT views_pkey PRIMARY KEY (playbook_pk, name)
);
