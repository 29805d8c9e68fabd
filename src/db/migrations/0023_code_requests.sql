-- Code allowances nobody else can use up (docs/decisions.md, wave 3 "throttles").

-- Every request for an emailed or texted code, whether or not an account has the address, so
-- that the per-requester limit answers alike for both. `requester` is the client's network
-- (`net:<a.b.c.0/24>` or `net:<first four groups>::/64`) or, for a signed-in request,
-- `wallet:<id>`. `trusted`: the requester had proven the address recently (or is signed in),
-- so the recipient's shared allowance does not apply. `sent`: a code went out. Rows older
-- than an hour are of no use and are deleted as requests come.
CREATE TABLE code_requests (
  id          text PRIMARY KEY,
  purpose     text NOT NULL CHECK (purpose IN ('verification', 'otp', 'password_reset')),
  recipient   text NOT NULL,
  requester   text NOT NULL,
  trusted     boolean NOT NULL,
  sent        boolean NOT NULL,
  created_at  timestamptz(3) NOT NULL
);
CREATE INDEX code_requests_recipient ON code_requests (purpose, recipient, created_at);
CREATE INDEX code_requests_age ON code_requests (created_at);

-- Networks from which someone proved an address (a code used, a password sign-in with it):
-- their requests for that address get a code even when others used up its allowance.
CREATE TABLE code_trusted_requesters (
  recipient        text NOT NULL,
  requester        text NOT NULL,
  last_success_at  timestamptz(3) NOT NULL,
  PRIMARY KEY (recipient, requester)
);
CREATE INDEX code_trusted_requesters_age ON code_trusted_requesters (last_success_at);
