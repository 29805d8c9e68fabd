-- Domain tables shared by several features. Feature-specific extras come in later files.

-- Messages the default sender keeps (codes, invitations). `npm run ons -- outbox --to …`.
CREATE TABLE outbox_messages (
  id          text PRIMARY KEY,
  channel     text NOT NULL CHECK (channel IN ('email', 'sms')),
  recipient   text NOT NULL,
  kind        text NOT NULL,
  subject     text NOT NULL,
  body        text NOT NULL,
  created_at  timestamptz(3) NOT NULL
);
CREATE INDEX outbox_recipient ON outbox_messages (recipient, created_at DESC);

-- Every change to a balance is one row here, written with its cause. amount_wei is signed:
-- credits positive, debits negative. organizations.balance_wei always equals the sum.
CREATE TABLE ledger_entries (
  id                text PRIMARY KEY,
  organization_id   text NOT NULL REFERENCES organizations (id),
  kind              text NOT NULL CHECK (kind IN ('deposit', 'action_fee', 'adjustment')),
  amount_wei        numeric(78, 0) NOT NULL,
  balance_after_wei numeric(78, 0) NOT NULL CHECK (balance_after_wei >= 0),
  ref_id            text,
  created_at        timestamptz(3) NOT NULL
);
CREATE INDEX ledger_org_created ON ledger_entries (organization_id, created_at, id);

CREATE TABLE deposits (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  tx_hash         text NOT NULL UNIQUE,
  token           text NOT NULL,
  token_address   text,
  amount_wei      numeric(78, 0) NOT NULL CHECK (amount_wei > 0),
  created_at      timestamptz(3) NOT NULL
);
CREATE INDEX deposits_org_created ON deposits (organization_id, created_at DESC, id DESC);

CREATE TABLE templates (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  name            text NOT NULL,
  description     text NOT NULL DEFAULT '',
  category        text NOT NULL DEFAULT '',
  faces           jsonb NOT NULL DEFAULT '[]',
  actions         text[] NOT NULL DEFAULT '{}',
  custom_schema   jsonb,
  is_public       boolean NOT NULL DEFAULT false,
  created_at      timestamptz(3) NOT NULL,
  updated_at      timestamptz(3) NOT NULL
);
CREATE INDEX templates_org_created ON templates (organization_id, created_at DESC, id DESC);

-- Smart objects (docs/objects.md, "The object record"). organization_id is the template's
-- organization.
CREATE TABLE objects (
  id                  text PRIMARY KEY,
  organization_id     text NOT NULL REFERENCES organizations (id),
  template_id         text NOT NULL REFERENCES templates (id),
  owner               text NOT NULL,
  metadata            jsonb NOT NULL DEFAULT '{}',
  custom              jsonb NOT NULL DEFAULT '{}',
  custom_hash         text NOT NULL,
  latitude            double precision,
  longitude           double precision,
  geo_hash            text,
  ownership_claimed   boolean NOT NULL DEFAULT false,
  is_redeemed         boolean NOT NULL DEFAULT false,
  is_dropped          boolean NOT NULL DEFAULT false,
  is_public           boolean NOT NULL DEFAULT false,
  nonce               integer NOT NULL DEFAULT 0,
  version             integer NOT NULL DEFAULT 1,
  state_hash          text NOT NULL,
  content_hash        text NOT NULL,
  integrity_hash      text NOT NULL,
  prev_integrity_hash text NOT NULL,
  created_at          timestamptz(3) NOT NULL,
  updated_at          timestamptz(3) NOT NULL
);
CREATE INDEX objects_org_created ON objects (organization_id, created_at DESC, id DESC);
CREATE INDEX objects_owner ON objects (owner, created_at DESC, id DESC);
CREATE INDEX objects_template ON objects (template_id, created_at DESC, id DESC);

-- Applied actions (the action log). One row per applied action, written in its transaction.
CREATE TABLE action_logs (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  hash            text NOT NULL UNIQUE,
  name            text NOT NULL,
  wallet_id       text NOT NULL REFERENCES wallets (id),
  wallet          text NOT NULL,
  signature_type  text NOT NULL CHECK (signature_type IN ('eoa', 'webauthn')),
  signature       jsonb NOT NULL,
  nonce           bigint NOT NULL,
  params          jsonb NOT NULL,
  object_id       text,
  template_id     text,
  fee_wei         numeric(78, 0) NOT NULL,
  batch_id        text,
  created_at      timestamptz(3) NOT NULL,
  UNIQUE (wallet_id, nonce)
);
CREATE INDEX action_logs_org_created ON action_logs (organization_id, created_at DESC, id DESC);
CREATE INDEX action_logs_object ON action_logs (object_id, created_at DESC, id DESC);
