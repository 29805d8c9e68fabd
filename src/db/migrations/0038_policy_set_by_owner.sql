-- Whether an owner (a person) set a policy's current limits (docs/policies.md, "Who may set a
-- policy"): such a policy is changed or removed by an owner only, so two admins cannot lift
-- each other's limits an owner set. Policies written before this column count as an owner's
-- unless nothing says one touched them: created by a wallet that is not an owner today (or by
-- an API key) and never changed since. Who changed a policy was not kept, so a changed one
-- may have been changed by an owner: it is an owner's to change now.
ALTER TABLE policies ADD COLUMN set_by_owner boolean NOT NULL DEFAULT false;
UPDATE policies p SET set_by_owner = true
  WHERE p.updated_at > p.created_at
    OR (p.created_by_api_key_id IS NULL
      AND EXISTS (SELECT 1 FROM members m
        WHERE m.organization_id = p.organization_id AND m.wallet_id = p.created_by_wallet_id
          AND m.status = 'active' AND m.role = 'owner'));
