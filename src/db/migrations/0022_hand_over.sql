-- The hand-over of a wallet to the owner of its address (issue 27, docs/auth.md "Proof of
-- address") looks up what the wallet set up: the keys it created, and its memberships of any
-- status (the organizations it founded are those whose first membership is its own).
CREATE INDEX api_keys_created_by ON api_keys (created_by) WHERE deleted_at IS NULL;
CREATE INDEX members_wallet_any ON members (wallet_id, created_at) WHERE wallet_id IS NOT NULL;
