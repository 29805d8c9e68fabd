-- Idempotency keys (docs/api.md, "Idempotent requests"): the first answer of a creating POST
-- sent with an `Idempotency-Key`, kept 24 hours so a retry with the same key and the same
-- request is answered with it. Scoped to the caller's organization (or, for a person acting in
-- none, its wallet) and the route. `status` is NULL while the first request runs; `locked_at`
-- lets a request take over a key whose first request never finished (its process died).
-- `key` is the SHA-256 of the client's key and `body` the answer sealed with a key derived
-- from it (src/modules/idempotency/sealing.ts): an answer may hold a secret (a new API key).
CREATE TABLE idempotency_keys (
  scope        text NOT NULL,
  route        text NOT NULL,
  key          text NOT NULL,
  request_hash text NOT NULL,
  status       integer,
  headers      jsonb,
  body         text,
  locked_at    timestamptz(3) NOT NULL,
  created_at   timestamptz(3) NOT NULL,
  expires_at   timestamptz(3) NOT NULL,
  PRIMARY KEY (scope, route, key)
);
CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);
