import type { Executor } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, Code } from '../../lib/errors.js';
import type { AuthContext } from '../../lib/permissions.js';
import { sessionSignedInAt } from './repo/sessions.js';

/**
 * How recent a person's sign-in must be to add or remove a credential of its wallet, create an
 * API key, grant a role, turn self sign-up on, send webhook deliveries to a new place, or lift
 * a spend policy's limits (docs/auth.md, "Changing credentials"). A session's sign-in time is
 * when it was opened, an organization switch keeps it, and refreshing the tokens does not move
 * it.
 */
export const RECENT_SIGN_IN_MS = 10 * 60_000;

/**
 * Refuses (403 code 7, `details.reauthenticate`) a caller whose session was not opened by a
 * sign-in within RECENT_SIGN_IN_MS: a stolen access or refresh token must not be enough to add
 * a credential of the thief's or remove the owner's, mint an API key or make someone admin,
 * all of which would outlive the token. `action` names what is refused, for the message.
 */
export async function requireRecentSignIn(
  exec: Executor,
  clock: Clock,
  auth: AuthContext,
  action = "change this wallet's credentials",
): Promise<void> {
  const signedInAt = auth.sessionId === null ? null : await sessionSignedInAt(exec, auth.sessionId);
  if (signedInAt !== null && clock.now().getTime() - signedInAt.getTime() <= RECENT_SIGN_IN_MS) {
    return;
  }
  throw new AppError(
    Code.PERMISSION_DENIED,
    `sign in again to ${action} (a sign-in within the last ${RECENT_SIGN_IN_MS / 60_000} minutes)`,
    { reauthenticate: true, max_age_seconds: RECENT_SIGN_IN_MS / 1000 },
  );
}

/**
 * The same rule for the changes an API key may make without it: inviting or adding a member,
 * raising a role, turning self sign-up on, creating a webhook, changing its URL or rotating its
 * signing key, deleting a spend policy or loosening its limits (docs/auth.md, "Changing
 * credentials"). A caller with a session must have signed in within RECENT_SIGN_IN_MS, exactly
 * as `requireRecentSignIn` asks; an API key passes. A key is itself a long-lived credential
 * that its holder was given on purpose, and servers make these changes with one (creating
 * webhooks above all): what a stolen session's token must not do, a key was made to. A `user`
 * caller without a session is refused, as there.
 */
export async function requireRecentSignInOrKey(
  exec: Executor,
  clock: Clock,
  auth: AuthContext,
  action: string,
): Promise<void> {
  if (auth.kind === 'api_key') return;
  await requireRecentSignIn(exec, clock, auth, action);
}
