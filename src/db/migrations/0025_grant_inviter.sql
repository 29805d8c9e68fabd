-- Who made an invitation (docs/permissions.md, "Grants"; docs/decisions.md, wave 3). An
-- invitation is confirmed only while its inviter could still grant the role invited: a person
-- (invited_by_wallet_id) with the role it holds there now, an API key (invited_by_api_key_id)
-- with the permissions it holds now. Invitations made before this migration name nobody and
-- can no longer be confirmed: they were never checked against their inviter.
ALTER TABLE members ADD COLUMN invited_by_wallet_id text;
ALTER TABLE members ADD COLUMN invited_by_api_key_id text;
