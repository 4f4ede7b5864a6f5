-- Recall functions' views: one row for each recall function of a playbook, of the version
-- whose view it is. `folded_seq` is the last seq of the log the view has met (every event
-- after it is still to fold); `built` turns true once it has caught up with the log the first
-- time; `stalled` names the event a fold threw at and the error. Each change raises
-- `revision`, which a writer names to change the row only as it read it. `held_by` is
-- the server that folds the view until `held_until`: one server at a time.
CREATE TABLE views (
    playbook_pk  INTEGER NOT NULL REFERENCES playbooks (pk),
    name         TEXT NOT NULL,
    version      INTEGER NOT NULL,
    revision     INTEGER NOT NULL,
    view         TEXT NOT NULL,
    folded_seq   INTEGER NOT NULL,
    built        INTEGER NOT NULL,
    stalled      TEXT,
    updated_at   TEXT NOT NULL,
    held_by      TEXT,
    held_until   TEXT,
    PRIMARY KEY (playbook_pk, name)
) WITHOUT ROWID;
