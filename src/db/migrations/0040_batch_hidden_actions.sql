-- An object made private after its batch sealed (docs/batches.md, "An object made private
-- later"): the batch's public answers show its actions as private from then on.

-- The actions a sealed batch sealed public whose objects were private when its content was
-- last published: its content (`ipfs_url`) shows each as version 3's private record. In
-- execution order; empty while there is none.
ALTER TABLE batches ADD COLUMN hidden_actions text[] NOT NULL DEFAULT '{}';

-- Templates whose visibility switched since the sealer last brought the batches that hold
-- their objects' actions up to date. A switch notes its template in its own transaction
-- (`generation` counts the switches, so a switch during a pass is not lost); the sealer goes
-- through the template's batches in chain order (`after_sequence`: those up to it are done)
-- and removes the row when it reaches the end. `next_at`: not before then (a pass holds the
-- row meanwhile, or waits for a header still being computed); NULL: now.
CREATE TABLE batch_visibility_switches (
  template_id    text PRIMARY KEY,
  generation     bigint NOT NULL DEFAULT 1,
  after_sequence bigint NOT NULL DEFAULT 0,
  noted_at       timestamptz(3) NOT NULL,
  next_at        timestamptz(3)
);

-- Batches sealed before this migration: the private templates' batches are looked at once
-- (their content is also brought up to date by the first read of the batch or its content).
INSERT INTO batch_visibility_switches (template_id, noted_at)
SELECT id, now() FROM templates WHERE NOT is_public;
