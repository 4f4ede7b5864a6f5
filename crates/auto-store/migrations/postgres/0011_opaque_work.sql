-- A work item's payload is the runtime's to read: the store keeps it as the bytes it was given
-- and writes no shape of its own. The payloads kept as JSON become their text's bytes, which
-- the runtime reads as it wrote them.
ALTER TABLE work ALTER COLUMN payload TYPE bytea USING convert_to(payload::text, 'UTF8');
ALTER TABLE runs ALTER COLUMN ending_work_payload TYPE bytea
    USING convert_to(ending_work_payload::text, 'UTF8');
