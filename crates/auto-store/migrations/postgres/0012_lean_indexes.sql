-- Fewer pages a commit: an index entry that no listing needs is a page written and synced at
-- every commit that adds it. Each index below now holds only the rows its listings look for.

-- Listing events by type reads this index for the types that are rare in the log (the ones a
-- caller publishes, failures, requests, definitions). The types every run records are dense
-- in the log, so a listing of one reads the log in order and finds a page of them soon; they
-- stay out of the index. The list is `LOG_ORDER_EVENT_TYPES` in src/lib.rs, and a test holds
-- the two alike.
DROP INDEX events_type_idx;
CREATE INDEX events_type_idx ON events (playbook_pk, type, seq)
    WHERE type NOT IN ('run_started', 'run_succeeded', 'step_started', 'step_completed',
                       'call_started', 'call_ended', 'model_call_started',
                       'model_call_answered', 'tool_call_started', 'tool_call_answered',
                       'wait_started', 'wait_ended');

-- The listings of runs, newest first, read their indexes backwards, so each index keeps its
-- rows oldest first: a new run's entry goes at the end of its part of the index, where a full
-- page splits into the one before and a new one, not into the middle of older entries (on
-- SQLite's file, a third fewer pages written for these two indexes in a three-call workflow).
DROP INDEX runs_list_idx;
CREATE INDEX runs_list_idx ON runs (playbook_pk, started_at, run_id);
DROP INDEX runs_definition_idx;
CREATE INDEX runs_definition_idx ON runs (playbook_pk, def_type, name, started_at, run_id);

-- Listing runs by status: most runs succeed, so a listing of the succeeded reads the runs in
-- order (runs_list_idx) and the index keeps the rest: started, rejected, failed.
DROP INDEX runs_status_idx;
CREATE INDEX runs_status_idx ON runs (playbook_pk, status, started_at, run_id)
    WHERE status <> 'succeeded';

-- A tree's open calls are its started children: the only rows the count reads.
DROP INDEX runs_root_idx;
CREATE INDEX runs_root_idx ON runs (playbook_pk, root_run_id)
    WHERE root_run_id IS NOT NULL AND status = 'started';
