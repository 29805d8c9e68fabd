-- An object made private after its batch sealed (docs/batches.md, "An object made private
-- later"): the batch's public answers show its actions as private from then on.

-- The actions a sealed batch sealed public whose objects were private when its content was
-- last published: its content (`ipfs_url`) shows each as version 3's private record. In
-- execution order; empty while there is none.
ALTER TABLE batches ADD COLUMN hidden_actions text[] NOT NULL DEFAULT '{}';
