-- Interaction requests: the playbook's inbox (supplement §2, "A request"). One request per
-- interaction run that asks a person; its status moves once, from open to answered, expired,
-- undelivered or cancelled, in the transaction that ends its run. Times and JSON as in 0001.

CREATE TABLE requests (
    playbook_pk         INTEGER NOT NULL REFERENCES playbooks (pk),
    request_id          TEXT NOT NULL,
    run_id              TEXT NOT NULL,
    def_type            TEXT NOT NULL,
    name                TEXT NOT NULL,
    definition_version  INTEGER NOT NULL,
    to_whom             TEXT NOT NULL,
    message             TEXT NOT NULL,
    input               TEXT NOT NULL,
    output_schema       TEXT,
    status              TEXT NOT NULL
                        CHECK (status IN ('open', 'answered', 'expired', 'undelivered', 'cancelled')),
    created_at          TEXT NOT NULL,
    expires_at          TEXT NOT NULL,
    answered_by         TEXT,
    answer              TEXT,
    closed_at           TEXT,
    PRIMARY KEY (playbook_pk, request_id),
    UNIQUE (playbook_pk, run_id)
) WITHOUT ROWID;

-- list_requests, newest first, with its cursor (created_at, request_id), unfiltered or by
-- status.
CREATE INDEX requests_list_idx ON requests (playbook_pk, created_at DESC, request_id DESC);
CREATE INDEX requests_status_idx
    ON requests (playbook_pk, status, created_at DESC, request_id DESC);
