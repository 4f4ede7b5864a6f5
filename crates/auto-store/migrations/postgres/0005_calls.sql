-- Calls between runs: the call of the parent a child run answers, and the workflow at the top
-- of its tree. A child's ending adds work to its parent in the same transaction, so a parent
-- waiting for days holds nothing and hears the ending on whichever server records it; the
-- top run's started children are how many calls its tree waits for (WORKFLOW_MAX_OPEN_CALLS).

ALTER TABLE runs ADD COLUMN parent_call_id text;
ALTER TABLE runs ADD COLUMN root_run_id text COLLATE "C";

CREATE INDEX runs_root_idx ON runs (playbook_pk, root_run_id, status)
    WHERE root_run_id IS NOT NULL;
