-- Invitation emails sent, per recipient (docs/members.md, "Limits on invitations"): every
-- organization's invitations to one address count together, per rolling hour, in PostgreSQL
-- so that every process sees the same count. Rows older than an hour count for nothing and are
-- deleted a few at a time as invitations are sent.
CREATE TABLE invitation_emails (
  id              text PRIMARY KEY,
  recipient       text NOT NULL,
  organization_id text NOT NULL,
  created_at      timestamptz(3) NOT NULL
);
CREATE INDEX invitation_emails_recipient ON invitation_emails (recipient, created_at);
CREATE INDEX invitation_emails_created ON invitation_emails (created_at);

-- Pending invitations of an organization are counted before another is made.
CREATE INDEX members_org_invited ON members (organization_id, invite_expires_at)
  WHERE status = 'invited';

-- The auth sweeper deletes sessions that ended long ago (docs/auth.md, "What is kept"): ended
-- ones by their end, the others by their last use.
CREATE INDEX sessions_ended_at ON sessions (ended_at) WHERE ended_at IS NOT NULL;
CREATE INDEX sessions_live_last_used ON sessions (last_used_at) WHERE ended_at IS NULL;
-- A session's spent refresh tokens go with it (and the deletion's foreign key check finds them).
CREATE INDEX spent_refresh_tokens_session ON spent_refresh_tokens (session_id);
