import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db, Executor } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { asDate, asIso } from '../../db/values.js';
import {
  AppError,
  Code,
  conflict,
  failedPrecondition,
  forbidden,
  notFound,
} from '../../lib/errors.js';
import { hashToken } from '../../lib/hash.js';
import { newId } from '../../lib/ids.js';
import { pageOf, parseList, type Page } from '../../lib/list.js';
import { grantNeedsRecentSignIn, requireGrant, type Granter } from '../../lib/grants.js';
import {
  isRole,
  permissionsOfRole,
  type AuthContext,
  type Permission,
  type Role,
} from '../../lib/permissions.js';
import { liveKeyPermissions, revokeKeysCreatedIn } from '../api-keys/index.js';
import type { MessageSender } from '../notify/index.js';
import {
  findOrganization,
  granterIn,
  isOwner,
  requireOrgPermission,
  resolveOrgAccess,
  type OrgAccess,
} from '../organizations/index.js';
import {
  admitInvitationEmail,
  DEFAULT_INVITATION_LIMITS,
  type InvitationLimits,
} from './invitation-caps.js';
import * as repo from './repo.js';
import type {
  ConfirmInviteQuery,
  InviteConfirmation,
  InviteMemberInput,
  InvitePreview,
  ListMembersQuery,
  Member,
} from './schema.js';

/** How long an invitation can be confirmed (docs/auth.md, "Codes": codes expire). */
export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

const STATUSES = ['invited', 'active', 'removed'] as const;

function toMember(row: repo.MemberRow): Member {
  const found = STATUSES.find((s) => s === row.status) ?? 'removed';
  // An invitation accepted before its email has an account is bound to the first wallet that
  // confirms that email: until then nobody can act as that member, so it is still `invited`.
  const status = found === 'active' && row.wallet_id === null ? 'invited' : found;
  return {
    id: row.id,
    wallet_id: row.wallet_id,
    email: row.email,
    name: row.name,
    role: isRole(row.role) ? row.role : 'viewer',
    status,
    when_created: asIso(row.created_at),
    when_modified: asIso(row.updated_at),
  };
}

const invitationNotFound = () =>
  new AppError(Code.NOT_FOUND, 'invitation not found, already used or expired');

/** What members ask of sign-in (auth's sessions; src/container.ts wires it). */
export interface MemberSessions {
  /** Drops what this instance cached about callers (a role or membership changed). */
  invalidateAll(): void;
  /**
   * Refuses (403 code 7) a caller with a session whose sign-in is not recent; an API key
   * passes (docs/auth.md, "Changing credentials").
   */
  requireRecentSignInOrKey(exec: Executor, auth: AuthContext, action: string): Promise<void>;
}

/**
 * Members, roles and invitations of one organization. Owner rules: only an owner grants,
 * changes or removes the owner role, and the last active owner can be neither demoted nor
 * removed (400 code 9). Role changes take effect at once on this instance
 * (`invalidateAll`) and on the others when the change's notice arrives (src/revocations.ts).
 */
/**
 * Whether a member row is one of the owners the last-owner rule keeps: active and bound to a
 * wallet (an accepted invitation whose address has no account yet is no one who can act).
 */
const countsAsOwner = (m: repo.MemberRow): boolean =>
  m.role === 'owner' && m.status === 'active' && m.wallet_id !== null;

/**
 * The caller's standing once the owners are locked, read again: a change of the caller's own
 * role that committed while it waited for the locks counts (checked before as well, so a
 * caller without the permission takes no lock).
 */
async function standingAfterLock(
  tx: Executor,
  auth: AuthContext,
  orgId: string,
  perm: Permission,
): Promise<OrgAccess> {
  const access = await resolveOrgAccess(tx, auth, orgId);
  requireOrgPermission(access, perm);
  return access;
}

export class MemberService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly sessions: MemberSessions,
    private readonly sender: MessageSender,
    private readonly publicUrl: string,
    private readonly limits: InvitationLimits = DEFAULT_INVITATION_LIMITS,
  ) {}

  async list(auth: AuthContext, orgId: string, q: ListMembersQuery): Promise<Page<Member>> {
    const access = await resolveOrgAccess(this.db, auth, orgId);
    requireOrgPermission(access, 'members.read');
    const p = parseList(q, repo.MEMBER_LIST);
    const rows = await repo.listMembers(
      this.db,
      orgId,
      { id: q.id, name: q.name, status: q.status, dates: q },
      p,
    );
    const page = pageOf(
      rows,
      p,
      (r) => (p.sortBy === 'when_modified' ? asDate(r.updated_at) : asDate(r.created_at)),
      (r) => r.id,
    );
    return { ...page, items: page.items.map(toMember) };
  }

  /**
   * Invites an email address with a role. The single-use token is sent through the message
   * sender and stored only as its SHA-256; it expires after INVITATION_TTL_MS. Inviting, with
   * any role, needs a recent sign-in of a person (`requireRecentGrant`). Within the limits
   * of docs/members.md, "Limits on invitations" (`admitInvitationEmail`: 429 code 8 past them).
   */
  async invite(
    auth: AuthContext,
    orgId: string,
    input: InviteMemberInput,
  ): Promise<{ id: string }> {
    const access = await resolveOrgAccess(this.db, auth, orgId);
    requireOrgPermission(access, 'members.create');
    const grant = requireGrant(granterIn(access), { role: input.role });
    await this.requireRecentGrant(this.db, auth, input.role, null);
    const email = input.email.trim().toLowerCase();
    const id = newId('member');
    const token = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    await this.db.transaction(async (tx) => {
      // Serialises invitations of one address (not the organization row: fees lock that).
      await repo.lockInvitationEmail(tx, orgId, email);
      const org = await findOrganization(tx, orgId, auth.walletId);
      if (!org) throw notFound('organization');
      if (await repo.findLiveByEmail(tx, orgId, email)) {
        throw conflict(`${email} is already a member of this organization or invited to it`);
      }
      await admitInvitationEmail(tx, this.limits, { orgId, email, now });
      await repo.insertMember(tx, {
        id,
        orgId,
        walletId: null,
        email,
        name: null,
        grant,
        status: 'invited',
        inviteTokenHash: hashToken(token),
        inviteExpiresAt: new Date(now.getTime() + INVITATION_TTL_MS),
        // Confirming re-checks the role against this inviter as it is then.
        invitedByWallet: auth.walletId,
        invitedByApiKey: auth.apiKeyId,
        now,
      });
      // Sent inside the transaction: if sending fails, no invitation exists without its mail.
      // A console page that shows the invitation and accepts it on a button press: opening
      // the link changes nothing (a mail scanner may fetch it).
      const link = `${this.publicUrl}/console/invitation?${new URLSearchParams({
        organization_id: orgId,
        member_id: id,
        token,
      }).toString()}`;
      await this.sender.send({
        channel: 'email',
        to: email,
        kind: 'invitation',
        subject: `You are invited to ${org.name}`,
        text:
          `You are invited to join ${org.name} as ${input.role}.\n\n` +
          `Confirm within 7 days: ${link}\n\n` +
          `Member id: ${id}\nInvitation token: ${token}\n`,
      });
    });
    return { id };
  }

  /**
   * Changes a member's role: the new role must be within the caller's own permissions
   * (src/lib/grants.ts), and admin or owner, or a role that raises the member's, needs a
   * recent sign-in of a person; owner rules apply.
   */
  async changeRole(auth: AuthContext, orgId: string, memberId: string, role: Role): Promise<void> {
    requireOrgPermission(await resolveOrgAccess(this.db, auth, orgId), 'members.update');
    await this.db.transaction(async (tx) => {
      // Owners first, always in the same order, so concurrent changes queue, never deadlock.
      const owners = await repo.lockActiveOwners(tx, orgId);
      const access = await standingAfterLock(tx, auth, orgId, 'members.update');
      const grant = requireGrant(granterIn(access), { role });
      const member = await repo.findMember(tx, orgId, memberId, { forUpdate: true });
      if (!member || member.status === 'removed') throw notFound('member');
      await this.requireRecentGrant(tx, auth, role, isRole(member.role) ? member.role : 'viewer');
      if (member.role === 'owner' && !isOwner(access)) {
        throw forbidden("only an owner may change an owner's role");
      }
      if (member.role === 'owner' && role !== 'owner' && countsAsOwner(member) && owners <= 1) {
        throw failedPrecondition(
          'the last owner cannot be demoted; make another member owner first',
        );
      }
      // A pending invitation's role is checked again when it is confirmed, against its
      // inviter: whoever set the role now answers for it (docs/permissions.md).
      const setter = { walletId: auth.walletId, apiKeyId: auth.apiKeyId };
      await repo.setRole(
        tx,
        memberId,
        grant,
        this.clock.now(),
        member.status === 'invited' ? setter : null,
      );
    });
    this.sessions.invalidateAll();
  }

  /**
   * Removes a member (or withdraws an invitation); owner rules apply. The API keys its
   * wallet created in the organization are revoked in the same transaction, as a delete
   * revokes one: they stop for good, and the wallet's return (invited again, self sign-up)
   * brings none back.
   */
  async remove(auth: AuthContext, orgId: string, memberId: string): Promise<void> {
    requireOrgPermission(await resolveOrgAccess(this.db, auth, orgId), 'members.delete');
    await this.db.transaction(async (tx) => {
      const owners = await repo.lockActiveOwners(tx, orgId);
      const access = await standingAfterLock(tx, auth, orgId, 'members.delete');
      const member = await repo.findMember(tx, orgId, memberId, { forUpdate: true });
      if (!member || member.status === 'removed') throw notFound('member');
      if (member.role === 'owner' && !isOwner(access)) {
        throw forbidden('only an owner may remove an owner');
      }
      if (member.role === 'owner' && countsAsOwner(member) && owners <= 1) {
        throw failedPrecondition(
          'the last owner cannot be removed; make another member owner first',
        );
      }
      const now = this.clock.now();
      await repo.markRemoved(tx, memberId, now);
      if (member.status === 'active' && member.wallet_id !== null) {
        await revokeKeysCreatedIn(tx, orgId, member.wallet_id, now);
      }
    });
    this.sessions.invalidateAll();
  }

  /**
   * Confirms an invitation (no credential: the token is the proof). A wrong, used or
   * expired token → 404 code 5. The membership becomes active and is bound to the wallet
   * that confirmed that email, when one has; otherwise to the first wallet that confirms it
   * with a code later. A wallet that only names the email (unconfirmed) is never bound: the
   * token shows that its reader can read the mailbox, not that the wallet belongs to them.
   * The role is granted now, so it is checked now against the inviter as it is now
   * (`inviterNow`): an inviter demoted, removed or revoked since cannot hand out what it no
   * longer holds (403 code 7; the invitation stays, for when its inviter regains the power).
   */
  async confirmInvite(orgId: string, q: ConfirmInviteQuery): Promise<InviteConfirmation> {
    const now = this.clock.now();
    const member = await this.db.transaction(async (tx) => {
      const { m } = await this.liveInvitation(tx, orgId, q, now, true);
      const role: Role = isRole(m.role) ? m.role : 'viewer';
      requireGrant(await this.inviterNow(tx, orgId, m, now), { role }, 'the inviter');
      const wallet = m.email ? await repo.findHolderOfEmail(tx, m.email.toLowerCase()) : null;
      if (wallet && (await repo.walletIsActiveMember(tx, orgId, wallet.id))) {
        throw conflict('the wallet with this email is already a member of this organization');
      }
      await repo.activateInvited(tx, m.id, wallet, now);
      return repo.findMember(tx, orgId, m.id);
    });
    if (!member) throw invitationNotFound();
    this.sessions.invalidateAll();
    return { organization_id: orgId, member: toMember(member) };
  }

  /**
   * What an invitation offers, read with its token and changing nothing (issue 32: the
   * emailed link opens a console page that shows this and accepts only on a button press,
   * so a mail scanner that fetches links accepts nothing).
   */
  async previewInvite(orgId: string, q: ConfirmInviteQuery): Promise<InvitePreview> {
    const { m, org } = await this.liveInvitation(this.db, orgId, q, this.clock.now(), false);
    return {
      organization_id: orgId,
      organization_name: org.name,
      member_id: m.id,
      email: m.email ?? '',
      role: isRole(m.role) ? m.role : 'viewer',
      when_expires: asIso(m.invite_expires_at!),
    };
  }

  /**
   * A person grants admin or owner, lets someone in (an invitation: `from` null) or raises a
   * role only within minutes of a sign-in (`grantNeedsRecentSignIn`; 403 code 7,
   * `details.reauthenticate`): whoever holds a stolen token must not make someone a member or
   * admin, who would keep the power after the token is gone. An API key passes, bounded by
   * its permissions as before.
   */
  private async requireRecentGrant(
    exec: Executor,
    auth: AuthContext,
    role: Role,
    from: Role | null,
  ) {
    if (!grantNeedsRecentSignIn(role, from)) return;
    await this.sessions.requireRecentSignInOrKey(exec, auth, `grant the ${role} role`);
  }

  /** The invitation `q` names, when its token is right and it is neither used nor expired. */
  private async liveInvitation(
    tx: Executor,
    orgId: string,
    q: ConfirmInviteQuery,
    now: Date,
    forUpdate: boolean,
  ) {
    const org = await findOrganization(tx, orgId, '');
    const m = await repo.findMember(tx, orgId, q.member_id, { forUpdate });
    if (!org || !m || m.status !== 'invited' || !m.invite_token_hash || !m.invite_expires_at) {
      throw invitationNotFound();
    }
    const given = Buffer.from(hashToken(q.token), 'hex');
    const stored = Buffer.from(m.invite_token_hash, 'hex');
    if (given.length !== stored.length || !timingSafeEqual(given, stored)) {
      throw invitationNotFound();
    }
    if (asDate(m.invite_expires_at).getTime() <= now.getTime()) throw invitationNotFound();
    return { m, org };
  }

  /**
   * The inviter of `m` as a granter now: a person with its active role in `orgId`, a key
   * with what it may do now (nothing once deleted or expired). An invitation that names no
   * inviter (made before they were recorded) was never checked against one: refused.
   */
  private async inviterNow(
    tx: Executor,
    orgId: string,
    m: repo.MemberRow,
    now: Date,
  ): Promise<Granter> {
    const none: ReadonlySet<Permission> = new Set();
    if (m.invited_by_api_key_id) {
      const perms = await liveKeyPermissions(tx, orgId, m.invited_by_api_key_id, now);
      return { permissions: perms ?? none, owner: false };
    }
    if (m.invited_by_wallet_id) {
      const role = await repo.activeRoleOf(tx, orgId, m.invited_by_wallet_id);
      if (role === null || !isRole(role)) return { permissions: none, owner: false };
      return { permissions: permissionsOfRole(role), owner: role === 'owner' };
    }
    throw forbidden(
      'this invitation was made before inviters were recorded and cannot be confirmed; ask for a new one',
    );
  }
}
