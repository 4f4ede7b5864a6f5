-- A work item's payload is the runtime's to read: the store keeps it as the bytes it was given
-- and writes no shape of its own. SQLite keeps a blob in a column declared TEXT as it is; the
-- payloads kept as JSON text become blobs of the same bytes, so every payload is one kind.
UPDATE work SET payload = CAST(payload AS BLOB);
UPDATE runs SET ending_work_payload = CAST(ending_work_payload AS BLOB)
WHERE ending_work_payload IS NOT NULL;
