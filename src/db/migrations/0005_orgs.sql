-- Organizations feature: support messages, access requests, and the indexes its lists use.

-- Support messages (a wallet id, a title and content), scoped by organization.
CREATE TABLE support_messages (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  wallet_id       text NOT NULL REFERENCES wallets (id),
  -- who sent it: the signed-in wallet, or the API key that sent it on behalf of wallet_id
  sent_by_wallet_id text NOT NULL REFERENCES wallets (id),
  api_key_id      text,
  title           text NOT NULL,
  content         text NOT NULL,
  created_at      timestamptz(3) NOT NULL
);
CREATE INDEX support_messages_org_created
  ON support_messages (organization_id, created_at DESC, id DESC);

-- Requests for access to a feature, sent without authentication; limited per client address.
CREATE TABLE access_requests (
  id          text PRIMARY KEY,
  feature     text NOT NULL,
  email       text NOT NULL,
  details     text NOT NULL DEFAULT '',
  client_ip   text NOT NULL,
  created_at  timestamptz(3) NOT NULL
);
CREATE INDEX access_requests_ip_created ON access_requests (client_ip, created_at DESC);

-- Invitations are looked up by email when inviting (one live membership per address).
CREATE INDEX members_org_email ON members (organization_id, lower(email))
  WHERE status <> 'removed';
-- Organizations a wallet belongs to (GET /organizations) and the owners of one (last-owner rule).
CREATE INDEX members_org_role ON members (organization_id, role) WHERE status = 'active';
