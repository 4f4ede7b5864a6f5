-- The type index's condition as a chain of comparisons: SQLite codes `type NOT IN (a list)`
-- as a temporary B-tree of the list, built again for every row an INSERT writes, where twelve
-- comparisons cost a few instructions. Same rows in the index; the statements that read it
-- repeat this condition (`indexed_event_types!` in src/sql/rows.rs).
DROP INDEX events_type_idx;
CREATE INDEX events_type_idx ON events (playbook_pk, type, seq)
    WHERE type <> 'run_started' AND type <> 'run_succeeded' AND type <> 'step_started'
      AND type <> 'step_completed' AND type <> 'call_started' AND type <> 'call_ended'
      AND type <> 'model_call_started' AND type <> 'model_call_answered'
      AND type <> 'tool_call_started' AND type <> 'tool_call_answered'
      AND type <> 'wait_started' AND type <> 'wait_ended';
