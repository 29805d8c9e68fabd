import type { Executor } from '../../db/pool.js';
import { AppError, Code } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import * as repo from './repo/invitations.js';

const HOUR_MS = 3_600_000;

/** The limits of docs/members.md, "Limits on invitations" (settings of docs/self-hosting.md). */
export interface InvitationLimits {
  /** Invitation emails one address receives per rolling hour, from every organization together. */
  perRecipientPerHour: number;
  /** Invitations an organization may have waiting to be confirmed at once. */
  pendingPerOrganization: number;
}

/** The defaults of INVITATIONS_PER_RECIPIENT_PER_HOUR and INVITATIONS_PENDING_MAX. */
export const DEFAULT_INVITATION_LIMITS: InvitationLimits = {
  perRecipientPerHour: 5,
  pendingPerOrganization: 100,
};

/**
 * Counts an invitation email to `email` from `orgId` against both limits, in the inviting
 * transaction (so a refused invitation leaves nothing, and a rolled-back one counts for
 * nothing). Over either limit, the invitation is refused (429 code 8) rather than made
 * without its email: its token travels only in that email, so an invitation nobody receives
 * is one nobody can accept, and the inviter should know to try again later. The counts are
 * of emails sent, never of accounts: the answer is the same whether or not anyone holds the
 * address (docs/decisions.md, "Invitation emails have limits").
 */
export async function admitInvitationEmail(
  tx: Executor,
  limits: InvitationLimits,
  input: { orgId: string; email: string; now: Date },
): Promise<void> {
  const { orgId, email, now } = input;
  const hourAgo = new Date(now.getTime() - HOUR_MS);
  await repo.lockInvitationCounts(tx, orgId, email);
  await repo.pruneEmails(tx, hourAgo);
  const pending = await repo.countPending(tx, orgId, now);
  if (pending >= limits.pendingPerOrganization) {
    throw new AppError(
      Code.RESOURCE_EXHAUSTED,
      `an organization may have at most ${limits.pendingPerOrganization} invitations waiting; withdraw some or wait for them to be confirmed`,
      { max_pending_invitations: limits.pendingPerOrganization },
    );
  }
  const sent = await repo.emailsSince(tx, email, hourAgo);
  if (sent.n >= limits.perRecipientPerHour) {
    const retryMs = (sent.oldest?.getTime() ?? now.getTime()) + HOUR_MS - now.getTime();
    throw new AppError(
      Code.RESOURCE_EXHAUSTED,
      'this address has received too many invitations in the last hour; try again later',
      {
        retry_after_seconds: Math.max(1, Math.ceil(retryMs / 1000)),
        max_invitations_per_recipient_per_hour: limits.perRecipientPerHour,
      },
    );
  }
  await repo.insertEmail(tx, { id: newId('member'), recipient: email, orgId, now });
}
