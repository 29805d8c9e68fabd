-- The credentials a wallet signs in and signs actions with (docs/auth.md, "The four ways in").
CREATE TABLE credentials (
  id           text PRIMARY KEY,
  wallet_id    text NOT NULL REFERENCES wallets (id),
  type         text NOT NULL CHECK (type IN ('password', 'passkey', 'eoa', 'google')),
  label        text NOT NULL DEFAULT '',
  -- eoa: lowercase 0x address; google: the subject; passkey: the credential id (base64url);
  -- password: NULL (the hash is wallets.password_hash)
  external_id  text,
  -- passkey: the COSE public key
  public_key   bytea,
  sign_count   bigint NOT NULL DEFAULT 0,
  transports   text[] NOT NULL DEFAULT '{}',
  removed_at   timestamptz(3),
  created_at   timestamptz(3) NOT NULL
);
CREATE UNIQUE INDEX credentials_external ON credentials (type, external_id)
  WHERE external_id IS NOT NULL AND removed_at IS NULL;
CREATE INDEX credentials_wallet ON credentials (wallet_id) WHERE removed_at IS NULL;
