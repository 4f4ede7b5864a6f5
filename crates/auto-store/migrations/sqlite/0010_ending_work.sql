-- How a child's ending reaches its caller is the runtime's to say: the work its ending adds to
-- its parent run, given when the child starts and kept here as it was given, so the store
-- writes no work of a shape of its own. The children started before this column are given
-- the work those versions added.
ALTER TABLE runs ADD COLUMN ending_work_key TEXT;
ALTER TABLE runs ADD COLUMN ending_work_payload TEXT;
ALTER TABLE runs ADD COLUMN ending_work_ordered INTEGER NOT NULL DEFAULT 0;
UPDATE runs SET ending_work_key = 'ended:' || parent_call_id,
    ending_work_payload = json_object('child_ended',
        json_object('call_id', parent_call_id, 'child_run_id', run_id)),
    ending_work_ordered = 1
WHERE parent_run_id IS NOT NULL AND parent_call_id IS NOT NULL;
