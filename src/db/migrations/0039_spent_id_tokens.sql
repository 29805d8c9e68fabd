-- Google ID tokens already used to sign in (docs/auth.md, "Google"): each signs in once. Kept
-- by their SHA-256 until they expire; a token past its expiry is refused anyway.
CREATE TABLE spent_id_tokens (
  token_hash bytea PRIMARY KEY,
  expires_at timestamptz(3) NOT NULL
);
CREATE INDEX spent_id_tokens_expires ON spent_id_tokens (expires_at);
