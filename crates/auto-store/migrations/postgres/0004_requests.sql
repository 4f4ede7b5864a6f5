-- Interaction requests: the playbook's inbox (supplement §2, "A request"). One request per
-- interaction run that asks a person; its status moves once, from open to answered, expired,
-- undelivered or cancelled, in the transaction that ends its run.

CREATE TABLE requests (
    playbook_pk         bigint NOT NULL REFERENCES playbooks (pk),
    request_id          text COLLATE "C" NOT NULL,
    run_id              text COLLATE "C" NOT NULL,
    def_type            text NOT NULL,
    name                text NOT NULL,
    definition_version  bigint NOT NULL,
    to_whom             text NOT NULL,
    message             text NOT NULL,
    input               jsonb NOT NULL,
    output_schema       jsonb,
    status              text NOT NULL
                        CHECK (status IN ('open', 'answered', 'expired', 'undelivered', 'cancelled')),
    created_at          timestamptz NOT NULL,
    expires_at          timestamptz NOT NULL,
    answered_by         text,
    answer              jsonb,
    closed_at           timestamptz,
    PRIMARY KEY (playbook_pk, request_id),
    UNIQUE (playbook_pk, run_id)
);

-- list_requests, newest first, with its cursor (created_at, request_id), unfiltered or by
-- status.
CREATE INDEX requests_list_idx ON requests (playbook_pk, created_at DESC, request_id DESC);
CREATE INDEX requests_status_idx
    ON requests (playbook_pk, status, created_at DESC, request_id DESC);
