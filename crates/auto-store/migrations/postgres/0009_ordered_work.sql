-- A run's inputs apply one at a time in the order they were received, on whichever server
-- claims them (workflow page, "Waiting for events"): an input is `ordered`, and is not claimed
-- while an earlier input of its run is leased to another server. `claimed_by` names the
-- server (its scheduler) that holds the lease, which may claim the run's next inputs and
-- queue them behind the first.
ALTER TABLE work ADD COLUMN ordered BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE work ADD COLUMN claimed_by TEXT;
-- The inputs written before this column: a start, a timer, an event sent or heard, a
-- child's ending, a cancel.
UPDATE work SET ordered = true
WHERE key IN ('start', 'cancel') OR key LIKE 'timer:%' OR key LIKE 'event:%' OR key LIKE 'ended:%';
CREATE INDEX work_run_idx ON work (playbook_pk, run_id, due_at, id) WHERE ordered;
