-- The transparency log's lookup of an entry by its leaf (`GET /log/proof/inclusion?hash=`) is
-- an equality on 32 random bytes: a hash index answers it at half the size of a B-tree and
-- about half its cost per appended entry (docs/decisions.md, 2026-11-28).
DROP INDEX log_entries_leaf;
CREATE INDEX log_entries_leaf ON log_entries USING hash (leaf);
