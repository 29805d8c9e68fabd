import type { Logger } from 'pino';
import type { Db, Executor } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import type { SecretSealer } from '../../lib/sealed-secret.js';
import { invalid, notFound } from '../../lib/errors.js';
import { isId, newId } from '../../lib/ids.js';
import { pageOf, parseList } from '../../lib/list.js';
import { requireOrg, requirePermission, type AuthContext } from '../../lib/permissions.js';
import { getTemplateForAction } from '../templates/index.js';
import type { AddressPolicy, HostResolver } from './http-client/address-policy.js';
import { refusedUrl } from './http-client/url-check.js';
import { newSigningKey, previousKeyAt, signingKeyAt } from './keys.js';
import { requireDeliveryReads } from './reach.js';
import { failQueued } from './repo/deliveries.js';
import * as repo from './repo/webhooks.js';
import type { WebhookRow } from './repo/webhooks.js';
import {
  MAX_WEBHOOKS,
  type CreateWebhookInput,
  type ListWebhooksQuery,
  type Rule,
  type RuleInput,
  type UpdateWebhookInput,
  type Webhook,
  type WebhookList,
  type WebhookWithKey,
} from './schema.js';

/** How long the key before a rotation keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

export function toWebhook(row: WebhookRow): Webhook {
  return {
    id: row.id,
    url: row.url,
    rules: row.rules,
    description: row.description,
    is_active: row.is_active,
    when_created: row.created_at.toISOString(),
    when_modified: row.updated_at.toISOString(),
  };
}

/** What webhooks ask of sign-in (auth's sessions; src/container.ts wires it). */
export interface WebhookSessions {
  /**
   * Refuses (403 code 7) a caller with a session whose sign-in is not recent; an API key
   * passes (docs/auth.md, "Changing credentials").
   */
  requireRecentSignInOrKey(exec: Executor, auth: AuthContext, action: string): Promise<void>;
}

export interface WebhookServiceDeps {
  db: Db;
  clock: Clock;
  policy: AddressPolicy;
  resolve: HostResolver;
  /** Seals the keys stored (SECRETS_KEY; src/lib/sealed-secret.ts). */
  secrets: SecretSealer;
  /** Where a refused name's address goes (debug): the caller is not told it. */
  logger: Pick<Logger, 'debug'>;
  /**
   * Sending deliveries to a new place, or taking a new signing key, needs a person's recent
   * sign-in: the endpoint and the key outlive the token that set them.
   */
  sessions: WebhookSessions;
}

/** Webhooks of an organization: create, list, read, change, delete, rotate the key. */
export class WebhookService {
  constructor(private readonly deps: WebhookServiceDeps) {}

  /**
   * Creates a webhook; answers it with its signing key, which is never shown again. A person
   * needs a recent sign-in (docs/auth.md, "Changing credentials"): a stolen token must not
   * point the organization's actions at the thief's endpoint for good. An API key passes.
   */
  async create(auth: AuthContext, input: CreateWebhookInput): Promise<WebhookWithKey> {
    requirePermission(auth, 'webhooks.create');
    requireDeliveryReads(auth);
    const orgId = requireOrg(auth);
    await this.deps.sessions.requireRecentSignInOrKey(this.deps.db, auth, 'create a webhook');
    await this.checkUrl(input.url);
    const rules = await this.checkRules(orgId, input.rules);
    const key = newSigningKey();
    const id = newId('webhook');
    const row = await this.deps.db.transaction(async (tx) => {
      if (!(await repo.lockOrganization(tx, orgId))) throw notFound('organization');
      if ((await repo.countWebhooks(tx, orgId)) >= MAX_WEBHOOKS) {
        throw invalid(`an organization holds at most ${MAX_WEBHOOKS} webhooks`);
      }
      return repo.insertWebhook(tx, {
        id,
        orgId,
        url: input.url,
        description: input.description ?? '',
        rules,
        signingKey: this.deps.secrets.sealBytes(key, signingKeyAt(id)),
        now: this.deps.clock.now(),
      });
    });
    return { ...toWebhook(row), signing_key: key.toString('hex') };
  }

  /** The organization's webhooks, newest first by default (list conventions). */
  async list(auth: AuthContext, query: ListWebhooksQuery): Promise<WebhookList> {
    requirePermission(auth, 'webhooks.read');
    const orgId = requireOrg(auth);
    const page = parseList(query, repo.WEBHOOK_LIST);
    const rows = await repo.listWebhooks(this.deps.db, orgId, page, query);
    const out = pageOf(
      rows,
      page,
      (r) => r.created_at,
      (r) => r.id,
    );
    return { webhooks: out.items.map(toWebhook), next: out.next, has_more: out.has_more };
  }

  async get(auth: AuthContext, id: string): Promise<Webhook> {
    requirePermission(auth, 'webhooks.read');
    const orgId = requireOrg(auth);
    const row = await repo.findWebhook(this.deps.db, orgId, id);
    if (!row) throw notFound('webhook');
    return toWebhook(row);
  }

  /**
   * Replaces the fields given. Switching a webhook off fails its queued deliveries;
   * switching it on again delivers only actions applied from then on (docs/webhooks.md). A
   * `url` other than the webhook's needs a person's recent sign-in, asked under the row's
   * lock before the write (as `create`); the rest sends nothing to a new place.
   */
  async update(auth: AuthContext, id: string, input: UpdateWebhookInput): Promise<Webhook> {
    requirePermission(auth, 'webhooks.update');
    // Only a description, or switching off, sends nothing.
    if (input.url !== undefined || input.rules !== undefined || input.is_active === true) {
      requireDeliveryReads(auth);
    }
    const orgId = requireOrg(auth);
    if (input.url !== undefined) await this.checkUrl(input.url);
    const rules = input.rules !== undefined ? await this.checkRules(orgId, input.rules) : undefined;
    return this.deps.db.transaction(async (tx) => {
      if (input.url !== undefined) {
        const current = await repo.findWebhook(tx, orgId, id, true);
        if (!current) throw notFound('webhook');
        if (current.url !== input.url) {
          await this.deps.sessions.requireRecentSignInOrKey(tx, auth, "change a webhook's URL");
        }
      }
      const now = this.deps.clock.now();
      const row = await repo.updateWebhook(
        tx,
        orgId,
        id,
        { url: input.url, description: input.description, rules, isActive: input.is_active },
        now,
      );
      if (!row) throw notFound('webhook');
      if (input.is_active === false) await failQueued(tx, [id], now);
      return toWebhook(row);
    });
  }

  /** Deletes a webhook: no more deliveries, its queued ones `failed`, its keys forgotten. */
  async delete(auth: AuthContext, id: string): Promise<void> {
    requirePermission(auth, 'webhooks.delete');
    const orgId = requireOrg(auth);
    await this.deps.db.transaction(async (tx) => {
      const now = this.deps.clock.now();
      if (!(await repo.deleteWebhook(tx, orgId, id, now))) throw notFound('webhook');
      await failQueued(tx, [id], now);
    });
    this.forgetKeys(id);
  }

  /**
   * A new signing key, answered once. For 24 hours deliveries carry a signature by each
   * key (`v1=<new>,v1=<old>`), so receivers can switch without losing a delivery. A sealed
   * key is bound to its column: the current one is opened and sealed again as the previous.
   * A person needs a recent sign-in, as for `create`: the new key is shown to the caller
   * alone, and after the 24 hours it is the only one deliveries carry, so a thief who rotated
   * it would hold the webhook's key while the customer's endpoint holds none that verifies.
   */
  async rotateKey(auth: AuthContext, id: string): Promise<WebhookWithKey> {
    requirePermission(auth, 'webhooks.update');
    const orgId = requireOrg(auth);
    await this.deps.sessions.requireRecentSignInOrKey(
      this.deps.db,
      auth,
      "rotate a webhook's signing key",
    );
    const key = newSigningKey();
    const now = this.deps.clock.now();
    const until = new Date(now.getTime() + ROTATION_OVERLAP_MS);
    const { secrets } = this.deps;
    const row = await this.deps.db.transaction(async (tx) => {
      const current = await repo.lockedKey(tx, orgId, id);
      if (current === null) return null;
      const keys = {
        key: secrets.sealBytes(key, signingKeyAt(id)),
        previous: secrets.sealBytes(
          secrets.openBytes(current, signingKeyAt(id)),
          previousKeyAt(id),
        ),
      };
      return repo.rotateKey(tx, orgId, id, keys, until, now);
    });
    if (!row) throw notFound('webhook');
    this.forgetKeys(id);
    return { ...toWebhook(row), signing_key: key.toString('hex') };
  }

  /**
   * Once a webhook's keys are no longer stored as they were (rotated, deleted), this process
   * forgets the ones it opened (src/lib/sealed-secret.ts); other processes keep theirs until
   * their memory's cap pushes them out, never using them (each is found by its stored form).
   */
  private forgetKeys(id: string): void {
    this.deps.secrets.forget([signingKeyAt(id), previousKeyAt(id)]);
  }

  private async checkUrl(url: string): Promise<void> {
    const why = await refusedUrl(url, this.deps.policy, this.deps.resolve, undefined, (d) =>
      this.deps.logger.debug(d, 'a webhook url refused: its host resolves to a non-public address'),
    );
    if (why) throw invalid(`webhook url ${why}`, [{ field: 'url', reason: why }]);
  }

  /**
   * Each rule's template must be the organization's or public. Names and addresses are
   * normalised (lowercase addresses, no repeats) so matching in SQL compares exact text.
   */
  private async checkRules(orgId: string, input: readonly RuleInput[]): Promise<Rule[]> {
    const out: Rule[] = [];
    for (const [i, r] of input.entries()) {
      const field = `rules.${i}.template_id`;
      if (!isId('template', r.template_id)) {
        throw invalid('malformed template id', [{ field, reason: 'is not a template id' }]);
      }
      const t = await getTemplateForAction(this.deps.db, r.template_id);
      if (!t || (t.organization_id !== orgId && !t.is_public)) {
        throw invalid('no such template for this organization', [
          { field, reason: 'is neither a template of the organization nor a public one' },
        ]);
      }
      out.push({
        template_id: r.template_id,
        actions: [...new Set(r.actions ?? [])],
        addresses: [...new Set((r.addresses ?? []).map((a) => a.toLowerCase()))],
      });
    }
    return out;
  }
}
