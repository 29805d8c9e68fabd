-- Each applied action keeps the integrity hashes of the object state it produced, so an
-- object's chain can be walked from its newest state back to its mint from stored data.
ALTER TABLE action_logs ADD COLUMN prev_integrity_hash text;
ALTER TABLE action_logs ADD COLUMN integrity_hash text;
