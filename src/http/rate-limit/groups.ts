/** One limit: at most `limit` units in any rolling `windowMs`. */
export interface LimitRule {
  limit: number;
  windowMs: number;
}

export type GroupName =
  | 'read'
  | 'write'
  | 'ebus'
  | 'search'
  | 'upload'
  | 'webhooks'
  | 'content'
  | 'signup'
  | 'invitations'
  | 'default';

export interface Group {
  name: GroupName;
  /** The first rule is the one the X-RateLimit-* headers report; the others are bursts. */
  rules: LimitRule[];
  /** Whose allowance a request uses: its caller's, or its caller's organization's. */
  per: 'caller' | 'organization';
}

const MINUTE = 60_000;
const SECOND = 1_000;

export interface DefaultLimits {
  perMinute: number;
  perSecond: number;
}

/** The groups of docs/api.md, "Rate limits", plus a default for every route they do not list. */
export function buildGroups(defaults: DefaultLimits): Record<GroupName, Group> {
  const g = (name: GroupName, perMinute: number, perSecond: number): Group => ({
    name,
    rules: [
      { limit: perMinute, windowMs: MINUTE },
      { limit: perSecond, windowMs: SECOND },
    ],
    per: 'caller',
  });
  return {
    read: g('read', 300, 50),
    write: g('write', 60, 10),
    search: g('search', 120, 20),
    upload: g('upload', 30, 5),
    // Per organization: saves hold host lookup places (docs/webhooks.md, "Addresses"), and an
    // organization's members and keys are not each another allowance.
    webhooks: { ...g('webhooks', 30, 5), per: 'organization' },
    // A content not kept in memory is built on the event loop (~20 ms for an ordinary batch,
    // up to ~0.7 s for the largest), and anyone may ask: ten a second from a caller, so that a
    // monitor keeps up with the batches sealed and an auditor reads a thousand in ~100 s.
    content: g('content', 600, 10),
    // Making a wallet hashes its password (argon2, 19 MiB, tens of ms on a thread of libuv's
    // pool, which sign-ins and host lookups share) and adds a row: per caller (per address,
    // its /64 for IPv6, without a credential), far below the anonymous allowance.
    signup: g('signup', 30, 5),
    // Per organization: each invitation sends an email with text of the inviter's choosing
    // (the organization's name), so an organization's members and keys are not each another
    // allowance (docs/members.md, "Limits on invitations").
    invitations: { ...g('invitations', 30, 5), per: 'organization' },
    ebus: { name: 'ebus', rules: [{ limit: 2000, windowMs: SECOND }], per: 'organization' },
    default: g('default', defaults.perMinute, defaults.perSecond),
  };
}

/** The group of a route, from the table of docs/api.md, "Rate limits" (Fastify route patterns). */
export function groupOf(method: string, url: string): GroupName {
  if (method === 'GET') {
    if (url === '/indexer/search' || url === '/indexer/query') return 'search';
    if (url === '/batches/:batchId/content') return 'content';
    if (
      url === '/objects' ||
      url.startsWith('/objects/') ||
      url === '/templates' ||
      url.startsWith('/templates/') ||
      url === '/wallets' ||
      url.startsWith('/wallets/') ||
      url.startsWith('/indexer/')
    ) {
      return 'read';
    }
    return 'default';
  }
  if (method === 'POST') {
    if (url === '/objects' || url === '/templates') return 'write';
    if (url === '/ebus/actions' || url === '/ebus/actions/batch' || url === '/ebus/execute') {
      return 'ebus';
    }
    if (url === '/storage/upload') return 'upload';
    // Every route that always makes a wallet. The routes that make one only on a first sign-in
    // (a crypto wallet, Google) count in this group only when they do (`admitSignUp` in
    // hook.ts): a sign-in of a wallet that exists is no sign-up.
    if (
      url === '/organizations/wallets' ||
      url === '/wallets' ||
      url === '/wallets/connect/passkey/register/verify'
    ) {
      return 'signup';
    }
    if (url === '/organizations/:organizationId/members') return 'invitations';
    // Rotate-key, redeliver and replay are webhook writes too (docs/webhooks.md, "Managing
    // webhooks").
    if (url === '/webhooks' || url.startsWith('/webhooks/')) return 'webhooks';
    return 'default';
  }
  if (method === 'PUT') {
    if (url.startsWith('/objects/') || url.startsWith('/templates/')) return 'write';
    if (url.startsWith('/webhooks/')) return 'webhooks';
  }
  return 'default';
}
