-- An event trigger changed by a save before it had read every event recorded until then keeps
-- its earlier filters for those events: each was recorded while the earlier trigger applied
-- (workflow page, "When a trigger applies"). A JSON list of {filters, until_seq}, oldest
-- first; the sweep matches an event of seq below an entry's until_seq with that entry's filters.
ALTER TABLE triggers ADD COLUMN earlier jsonb;
