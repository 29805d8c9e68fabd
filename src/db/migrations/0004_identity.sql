-- Sign-in support: one-time codes, WebAuthn challenges, SIWE nonces, sign-in throttling.

-- Verification, one-time sign-in and password-reset codes (6 digits, stored hashed).
-- A code is single-use (used_at), expires (expires_at) and allows a few attempts.
CREATE TABLE codes (
  id          text PRIMARY KEY,
  purpose     text NOT NULL CHECK (purpose IN ('verification', 'otp', 'password_reset')),
  wallet_id   text NOT NULL REFERENCES wallets (id),
  channel     text NOT NULL CHECK (channel IN ('email', 'sms')),
  -- normalised email or E.164 phone number the code was sent to
  recipient   text NOT NULL,
  code_hash   text NOT NULL,
  attempts    integer NOT NULL DEFAULT 0,
  expires_at  timestamptz(3) NOT NULL,
  used_at     timestamptz(3),
  created_at  timestamptz(3) NOT NULL
);
CREATE INDEX codes_lookup ON codes (purpose, recipient, created_at DESC);

-- Pending WebAuthn ceremonies, found from the credential's own clientDataJSON challenge.
CREATE TABLE webauthn_challenges (
  challenge   text PRIMARY KEY,
  purpose     text NOT NULL CHECK (purpose IN ('register', 'login', 'link')),
  -- link: the signed-in wallet adding a passkey
  wallet_id   text REFERENCES wallets (id),
  expires_at  timestamptz(3) NOT NULL,
  created_at  timestamptz(3) NOT NULL
);
CREATE INDEX webauthn_challenges_expiry ON webauthn_challenges (expires_at);

-- Sign-In with Ethereum nonces: single use, short-lived, bound to one address.
CREATE TABLE siwe_nonces (
  nonce       text PRIMARY KEY,
  address     text NOT NULL,
  expires_at  timestamptz(3) NOT NULL,
  used_at     timestamptz(3),
  created_at  timestamptz(3) NOT NULL
);
CREATE INDEX siwe_nonces_expiry ON siwe_nonces (expires_at);

-- Failed sign-in counters per account and per client address (shared by every instance).
CREATE TABLE sign_in_failures (
  key           text PRIMARY KEY,
  failures      integer NOT NULL,
  window_start  timestamptz(3) NOT NULL,
  blocked_until timestamptz(3)
);
