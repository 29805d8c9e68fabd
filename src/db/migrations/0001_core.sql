-- Core tables every feature refers to. Money is numeric(78,0) wei; time is timestamptz(3).

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE organizations (
  id            text PRIMARY KEY,
  name          text NOT NULL,
  description   text NOT NULL DEFAULT '',
  settings      jsonb NOT NULL DEFAULT '{"allow_self_signup": false}',
  balance_wei   numeric(78, 0) NOT NULL DEFAULT 0 CHECK (balance_wei >= 0),
  deleted_at    timestamptz(3),
  created_at    timestamptz(3) NOT NULL,
  updated_at    timestamptz(3) NOT NULL
);
CREATE INDEX organizations_name_trgm ON organizations USING gin (name gin_trgm_ops);

CREATE TABLE wallets (
  id                 text PRIMARY KEY,
  address            text NOT NULL UNIQUE,
  email              text UNIQUE,
  phone_number       text UNIQUE,
  name               text,
  password_hash      text,
  email_confirmed_at timestamptz(3),
  phone_confirmed_at timestamptz(3),
  -- the organization the wallet signs in to by default (its last context)
  default_org_id     text REFERENCES organizations (id),
  next_nonce         bigint NOT NULL DEFAULT 0,
  created_at         timestamptz(3) NOT NULL,
  updated_at         timestamptz(3) NOT NULL
);

CREATE TABLE members (
  id                text PRIMARY KEY,
  organization_id   text NOT NULL REFERENCES organizations (id),
  wallet_id         text REFERENCES wallets (id),
  email             text,
  name              text,
  role              text NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
  status            text NOT NULL CHECK (status IN ('invited', 'active', 'removed')),
  invite_token_hash text,
  invite_expires_at timestamptz(3),
  created_at        timestamptz(3) NOT NULL,
  updated_at        timestamptz(3) NOT NULL
);
-- one live membership per wallet and organization
CREATE UNIQUE INDEX members_org_wallet ON members (organization_id, wallet_id)
  WHERE wallet_id IS NOT NULL AND status <> 'removed';
CREATE INDEX members_wallet ON members (wallet_id) WHERE status = 'active';
CREATE INDEX members_org_created ON members (organization_id, created_at DESC, id DESC);

-- Sign-in sessions. Access tokens carry the session id; ending a session refuses them.
CREATE TABLE sessions (
  id                 text PRIMARY KEY,
  wallet_id          text NOT NULL REFERENCES wallets (id),
  organization_id    text REFERENCES organizations (id),
  refresh_token_hash text NOT NULL UNIQUE,
  device             text NOT NULL DEFAULT '',
  ip                 text,
  ended_at           timestamptz(3),
  ended_reason       text,
  last_used_at       timestamptz(3) NOT NULL,
  created_at         timestamptz(3) NOT NULL
);
CREATE INDEX sessions_wallet ON sessions (wallet_id, created_at DESC);

-- Refresh tokens already rotated away; presenting one again ends its session.
CREATE TABLE spent_refresh_tokens (
  token_hash  text PRIMARY KEY,
  session_id  text NOT NULL REFERENCES sessions (id),
  spent_at    timestamptz(3) NOT NULL
);

-- Token signing keys (JWKS). The newest active key signs; all unexpired keys verify.
CREATE TABLE signing_keys (
  kid          text PRIMARY KEY,
  alg          text NOT NULL,
  private_jwk  jsonb NOT NULL,
  public_jwk   jsonb NOT NULL,
  created_at   timestamptz(3) NOT NULL,
  retired_at   timestamptz(3)
);
