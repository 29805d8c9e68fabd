import type { Db } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { asDate, asIso } from '../../db/values.js';
import { forbidden, invalid, notFound, tooManyRequests } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { pageOf, parseList, type Page } from '../../lib/list.js';
import { requireOrg, type AuthContext } from '../../lib/permissions.js';
import { walletIsActiveMember } from '../members/index.js';
import * as repo from './repo.js';
import type {
  ListSupportMessagesQuery,
  RequestAccessInput,
  SendSupportMessageInput,
  SupportMessage,
} from './schema.js';

/** Access requests one client address may send per window (they need no credential). */
export const ACCESS_REQUESTS_PER_WINDOW = 5;
export const ACCESS_REQUEST_WINDOW_MS = 60 * 60 * 1000;

function toMessage(row: repo.SupportMessageRow): SupportMessage {
  return {
    id: row.id,
    organization_id: row.organization_id,
    wallet_id: row.wallet_id,
    title: row.title,
    content: row.content,
    when_created: asIso(row.created_at),
  };
}

/** Support messages of the caller's organization, and access requests from anyone. */
export class SupportService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /**
   * Stores a support message for a wallet of the caller's organization. A person writes as
   * their own wallet (`wallet_id` may be omitted or must be theirs); an API key acts for
   * no one in particular, so it must name an active member's wallet.
   */
  async send(auth: AuthContext, input: SendSupportMessageInput): Promise<{ id: string }> {
    const orgId = requireOrg(auth);
    let walletId: string;
    if (auth.kind === 'api_key') {
      if (input.wallet_id === undefined) {
        throw invalid('wallet_id is required when calling with an API key', [
          { field: 'wallet_id', reason: 'is required with an API key' },
        ]);
      }
      walletId = input.wallet_id;
      if (!(await walletIsActiveMember(this.db, orgId, walletId))) {
        throw notFound('wallet in this organization');
      }
    } else {
      walletId = input.wallet_id ?? auth.walletId;
      if (walletId !== auth.walletId) {
        throw forbidden('a signed-in person sends support messages as their own wallet');
      }
    }
    const id = newId('message');
    await repo.insertMessage(this.db, {
      id,
      organization_id: orgId,
      wallet_id: walletId,
      title: input.title,
      content: input.content,
      created_at: this.clock.now(),
      sentByWalletId: auth.walletId,
      apiKeyId: auth.apiKeyId,
    });
    return { id };
  }

  /** The organization's support messages (`org-id` naming another one finds none). */
  async list(auth: AuthContext, q: ListSupportMessagesQuery): Promise<Page<SupportMessage>> {
    const orgId = requireOrg(auth);
    const p = parseList(q, repo.SUPPORT_LIST);
    if (q['org-id'] !== undefined && q['org-id'] !== orgId) {
      return { items: [], next: '', has_more: false };
    }
    const rows = await repo.listMessages(
      this.db,
      orgId,
      { id: q.id, walletId: q.wallet_id, dates: q },
      p,
    );
    const page = pageOf(
      rows,
      p,
      (r) => asDate(r.created_at),
      (r) => r.id,
    );
    return { ...page, items: page.items.map(toMessage) };
  }

  /** One message of the caller's organization; another organization's → 404. */
  async get(auth: AuthContext, messageId: string): Promise<SupportMessage> {
    const orgId = requireOrg(auth);
    const row = await repo.findMessage(this.db, orgId, messageId);
    if (!row) throw notFound('support message');
    return toMessage(row);
  }

  /**
   * Stores a request for access to a feature (no credential). At most
   * ACCESS_REQUESTS_PER_WINDOW per client address per rolling window, counted in the
   * database so every instance shares the limit; beyond it → 429 code 8 with Retry-After.
   */
  async requestAccess(input: RequestAccessInput, clientIp: string): Promise<void> {
    const now = this.clock.now();
    await this.db.transaction(async (tx) => {
      await repo.lockClient(tx, clientIp);
      const since = new Date(now.getTime() - ACCESS_REQUEST_WINDOW_MS);
      const recent = await repo.recentAccessRequests(tx, clientIp, since);
      if (recent.n >= ACCESS_REQUESTS_PER_WINDOW && recent.oldest) {
        const retryMs = asDate(recent.oldest).getTime() + ACCESS_REQUEST_WINDOW_MS - now.getTime();
        throw tooManyRequests(
          `at most ${ACCESS_REQUESTS_PER_WINDOW} access requests per hour from one address`,
          Math.max(1, Math.ceil(retryMs / 1000)),
        );
      }
      await repo.insertAccessRequest(tx, {
        id: newId('request'),
        feature: input.feature,
        email: input.email.trim().toLowerCase(),
        details: input.details ?? '',
        clientIp,
        now,
      });
    });
  }
}
