-- A removed credential signs nothing and keeps no session (issue 14).

-- The credential that proved a sign-in (NULL for a code, and for sessions opened before this
-- migration): removing the credential ends the sessions it opened.
ALTER TABLE sessions ADD COLUMN credential_id text REFERENCES credentials (id);
CREATE INDEX sessions_credential ON sessions (credential_id)
  WHERE credential_id IS NOT NULL AND ended_at IS NULL;

-- The group statement (src/modules/ebus/group-write.ts) also guards the credentials that
-- signed its actions: each must still be live and belong to its wallet, or nothing of the
-- group is written (ONS01) and the locked path refuses the action. Same checks as the
-- four-argument form of migration 0010, plus that one.
CREATE FUNCTION ons_group_guard(nonces_ok boolean, objects_ok boolean, templates_ok boolean,
  debit_ok boolean, credentials_ok boolean) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  IF NOT credentials_ok THEN
    RAISE EXCEPTION 'group guard: a signing credential was removed' USING ERRCODE = 'ONS01';
  END IF;
  RETURN ons_group_guard(nonces_ok, objects_ok, templates_ok, debit_ok);
END $$;
