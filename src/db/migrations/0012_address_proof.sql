-- Proof of address before trust (issue 14). An email address or phone number is HELD by the
-- one wallet that confirmed it with a code; any number of wallets may NAME it unconfirmed. A
-- sign-up with an address someone else holds then answers like any other (nothing reveals
-- that the address is taken) and takes nothing: it cannot confirm the address, receive its
-- codes or invitations, or stop its owner from confirming it.
ALTER TABLE wallets DROP CONSTRAINT wallets_email_key;
ALTER TABLE wallets DROP CONSTRAINT wallets_phone_number_key;
CREATE UNIQUE INDEX wallets_email_held ON wallets (email) WHERE email_confirmed_at IS NOT NULL;
CREATE UNIQUE INDEX wallets_phone_held ON wallets (phone_number)
  WHERE phone_confirmed_at IS NOT NULL;
-- Every wallet naming an address, oldest first (password sign-in, codes).
CREATE INDEX wallets_email_named ON wallets (email, created_at) WHERE email IS NOT NULL;
CREATE INDEX wallets_phone_named ON wallets (phone_number, created_at)
  WHERE phone_number IS NOT NULL;

-- Notices sent to an address about accounts that named it without proof, so each address
-- gets only a few an hour however many accounts name it.
CREATE TABLE address_notices (
  id          text PRIMARY KEY,
  recipient   text NOT NULL,
  kind        text NOT NULL,
  created_at  timestamptz(3) NOT NULL
);
CREATE INDEX address_notices_recent ON address_notices (recipient, kind, created_at DESC);
