import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Executor } from '../../db/pool.js';
import { unpadCredential } from '../../lib/base64url.js';
import type { Clock } from '../../lib/clock.js';
import { canonicalJson } from '../../lib/canonical-json.js';
import {
  AppError,
  Code,
  failedPrecondition,
  invalid,
  notFound,
  type FieldIssue,
  unavailable,
} from '../../lib/errors.js';
import { nestsDeeperThan } from '../../lib/json-depth.js';
import { linkUrlReason } from '../../lib/link-url.js';
import { isDatabaseUnavailable } from '../../lib/pg-errors.js';
import { requireOrg, type AuthContext } from '../../lib/permissions.js';
import { actionLogPage } from './action-logs.js';
import { actionHash, buildActionText, webauthnChallenge } from './action-text.js';
import { DECIMALS, TOKEN, type FeeQuote, type FeeService } from './fees.js';
import type { GroupCommitter } from './group-commit.js';
import { walletNonce } from './nonce.js';
import { findWallet } from './repo/lookups.js';
import { findReplay, replayBudget, type ReplayBudget } from './replay.js';
import { ActionParams } from '../objects/index.js';
import {
  paramsCheckers,
  type ActionLogQuery,
  type BatchBody,
  type ExecuteBody,
  type PrepareBody,
} from './schema.js';
import type { ActionLogRecord, AppliedAction, VerifiedAction } from './types.js';
import type { SignatureVerifier } from './verify.js';

/** How long a prepared action stays valid for signing. */
export const PREPARE_TTL_MS = 10 * 60 * 1000;
/** How far ahead an action may expire: a signed action is not a standing order. */
export const MAX_EXPIRES_AHEAD_MS = 24 * 60 * 60 * 1000;
/** Bounds on an object's custom data: canonical JSON bytes and nesting (JSON levels). */
const MAX_CUSTOM_BYTES = 16 * 1024;
const MAX_CUSTOM_DEPTH = 32;

export interface EbusDeps {
  db: Executor;
  clock: Clock;
  config: Pick<Config, 'networkId' | 'webauthn'>;
  fees: FeeService;
  verifier: SignatureVerifier;
  committer: GroupCommitter;
  logger: Logger;
  /** The batch key's raw Ed25519 public key, 0x + hex ('' without batches). */
  batchPublicKey: string;
  /** The transparency log's keys (docs/log.md), when the log runs. */
  log?: NetworkLog;
}

/** What `GET /public/network` says of the transparency log: names and keys only. */
export interface NetworkLog {
  origin: string;
  verifier_key: string;
  witnesses: { name: string; verifier_key: string; url?: string }[];
}

export type BatchResult =
  | {
      status: 'applied';
      action: ActionLogRecord;
      object: AppliedAction['object'];
      /** True when the action had been applied before: the answer it gave then. */
      replayed?: true;
    }
  | { status: 'refused'; error: { code: number; message: string } };

/** The properties the object schema at `schemaPath` (`#/properties/metadata`) allows. */
function allowedFields(schema: unknown, schemaPath: string): string[] {
  let node = schema;
  for (const part of schemaPath.replace(/^#\/?/, '').split('/').filter(Boolean)) {
    node =
      node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[part] : null;
  }
  const props = (node as { properties?: unknown } | null)?.properties;
  return props !== null && typeof props === 'object' ? Object.keys(props) : [];
}

/** The first reason the params schema refuses `params`, an unknown key naming the allowed ones. */
function paramsIssue(
  name: keyof typeof paramsCheckers,
  params: Record<string, unknown>,
): FieldIssue {
  const e = paramsCheckers[name].Errors(params)[0];
  const path = (e?.instancePath ?? '').replace(/\//g, '.');
  // TypeBox reports an unknown key as `additionalProperties: false` failing on the key.
  if (e?.keyword === 'boolean' && e.schemaPath.endsWith('/additionalProperties')) {
    const allowed = allowedFields(
      ActionParams[name],
      e.schemaPath.replace(/\/additionalProperties$/, ''),
    );
    const reason =
      allowed.length > 0 ? `unknown field; allowed: ${allowed.join(', ')}` : 'unknown field';
    return { field: `action.params${path}`, reason };
  }
  const reason =
    (e?.keyword === 'pattern' ? linkUrlReason(e.params.pattern) : null) ??
    e?.message ??
    'is invalid';
  return { field: `action.params${path}`, reason };
}

/**
 * Schema of the params for their action (400 code 3), checked before anything else; then
 * the bounds of `custom` (depth before anything recursive reads it, then size), so the
 * template's schema only ever runs on bounded data.
 */
function checkParams(name: keyof typeof paramsCheckers, params: Record<string, unknown>): void {
  if (!paramsCheckers[name].Check(params)) {
    const issue = paramsIssue(name, params);
    throw invalid(`invalid ${name} params: ${issue.field} ${issue.reason}`, [issue]);
  }
  const custom = (params as { custom?: unknown }).custom;
  if (custom === undefined) return;
  const refuse = (reason: string) =>
    invalid(`invalid ${name} params: action.params.custom ${reason}`, [
      { field: 'action.params.custom', reason },
    ]);
  if (nestsDeeperThan(custom, MAX_CUSTOM_DEPTH)) {
    throw refuse(`nests deeper than ${MAX_CUSTOM_DEPTH} levels`);
  }
  let bytes: number;
  try {
    bytes = Buffer.byteLength(canonicalJson(custom));
  } catch (err) {
    throw refuse(`cannot be encoded: ${(err as Error).message.replace(/^canonicalJson: /, '')}`);
  }
  if (bytes > MAX_CUSTOM_BYTES) throw refuse(`is larger than ${MAX_CUSTOM_BYTES} bytes`);
}

/** The text of an action; params with no canonical JSON form (a lone surrogate) are a 400. */
function textOf(
  network: string,
  organizationId: string,
  action: Omit<Parameters<typeof buildActionText>[0], 'network' | 'organizationId'>,
): string {
  try {
    return buildActionText({ network, organizationId, ...action });
  } catch (err) {
    throw invalid(`the action cannot be written as text: ${(err as Error).message}`);
  }
}

/**
 * The event bus (docs/ebus.md: the four steps, "Inside"): nonce, prepare, execute. Execute
 * checks schema, expiry and signature here (`verify`, with verify.ts), outside any
 * transaction, then submits the action to the group committer (group-commit.ts), whose
 * `GroupApplier` (apply-group.ts) checks nonce, rights (objects/actions/) and balance and
 * applies it.
 */
export class EbusService {
  constructor(private readonly deps: EbusDeps) {}

  /** Network facts a client needs to build the text itself. */
  network(): {
    network: string;
    token: string;
    decimals: number;
    batch_public_key: string;
    webauthn: { rp_id: string; origins: string[] };
    log?: NetworkLog;
  } {
    const { rpId, origins } = this.deps.config.webauthn;
    return {
      network: this.deps.config.networkId,
      token: TOKEN,
      decimals: DECIMALS,
      batch_public_key: this.deps.batchPublicKey,
      // What every passkey assertion of an action names (verify.ts): anyone can check them.
      webauthn: { rp_id: rpId, origins: [...origins] },
      ...(this.deps.log ? { log: this.deps.log } : {}),
    };
  }

  fees(): Promise<FeeQuote> {
    return this.deps.fees.quote();
  }

  /** The next action number of the caller's wallet, or of a wallet of the caller's organization. */
  async nonce(auth: AuthContext, query: { address?: string; signer?: string }) {
    return walletNonce(this.deps.db, auth, query);
  }

  /** The exact text to sign; changes nothing and reserves nothing. */
  async prepare(auth: AuthContext, body: PrepareBody) {
    const orgId = requireOrg(auth);
    const params = body.action.params as Record<string, unknown>;
    checkParams(body.action.name, params);
    const w = body.wallet
      ? await findWallet(this.deps.db, orgId, { address: body.wallet.toLowerCase() })
      : await findWallet(this.deps.db, orgId, { id: auth.walletId });
    if (!w || !w.role) throw notFound('wallet in this organization');
    const expires = new Date(this.deps.clock.now().getTime() + PREPARE_TTL_MS).toISOString();
    const action = {
      wallet: w.address,
      name: body.action.name,
      params,
      nonce: w.next_nonce,
      expires,
    };
    const text = textOf(this.deps.config.networkId, orgId, action);
    return {
      text,
      action,
      hash: actionHash(text),
      challenge: webauthnChallenge(text),
      fee: await this.deps.fees.quote(),
    };
  }

  /**
   * Checks and applies one signed action; throws the refusal, unless the same signed action
   * was applied before: then its answer, with `replayed` (replay.ts).
   */
  async execute(
    auth: AuthContext,
    body: ExecuteBody,
  ): Promise<{ action: ActionLogRecord; object: AppliedAction['object']; replayed?: true }> {
    try {
      const verified = await this.verify(auth, body);
      const outcome = await this.deps.committer.submit(verified);
      if (!outcome.ok) throw outcome.error;
      return { action: outcome.applied.log, object: outcome.applied.object };
    } catch (err) {
      const replay = await this.replayOf(auth, body, err);
      if (replay) return { ...replay, replayed: true };
      throw err;
    }
  }

  /**
   * After a refusal only: the answer the same signed action (text and signature) gave when
   * it was applied before, or null. Bad input and an unreachable database are not looked up.
   */
  private async replayOf(
    auth: AuthContext,
    body: ExecuteBody,
    err: unknown,
    budget: ReplayBudget = replayBudget(),
  ) {
    if (!(err instanceof AppError) || !auth.orgId) return null;
    if (err.code === Code.INVALID_ARGUMENT || err.code === Code.UNAVAILABLE) return null;
    let text: string;
    try {
      const action = { ...body.action, params: body.action.params as Record<string, unknown> };
      text = textOf(this.deps.config.networkId, auth.orgId, action);
    } catch {
      return null;
    }
    try {
      return await findReplay(this.deps.db, auth.orgId, actionHash(text), body.signature, budget);
    } catch (lookupErr) {
      this.deps.logger.warn({ err: lookupErr }, 'the replay lookup of a refused action failed');
      return null;
    }
  }

  /**
   * Up to 100 signed actions, answered per item in order. All are verified first, then
   * queued together, so consecutive nonces of one wallet apply in order.
   */
  async executeBatch(auth: AuthContext, body: BatchBody): Promise<{ results: BatchResult[] }> {
    requireOrg(auth);
    const checked = await Promise.all(
      body.actions.map((item) =>
        this.verify(auth, item).then(
          (v) => ({ ok: true as const, v }),
          (err: unknown) => ({ ok: false as const, err }),
        ),
      ),
    );
    const outcomes = await Promise.all(
      checked.map((c) => (c.ok ? this.deps.committer.submit(c.v) : Promise.resolve(null))),
    );
    // The refused items' replays one after another, sharing the request's budget.
    const budget = replayBudget();
    const results: BatchResult[] = [];
    for (const [i, outcome] of outcomes.entries()) {
      if (outcome?.ok) {
        results.push({
          status: 'applied',
          action: outcome.applied.log,
          object: outcome.applied.object,
        });
        continue;
      }
      const c = checked[i]!;
      const err = outcome ? outcome.error : c.ok ? null : c.err;
      const replay = await this.replayOf(auth, body.actions[i]!, err, budget);
      results.push(replay ? { status: 'applied', ...replay, replayed: true } : refused(err));
    }
    // Nothing applied because the database is away: the whole call is retried later (503).
    if (
      results.every((r) => r.status === 'refused') &&
      results.some((r) => r.status === 'refused' && r.error.code === Code.UNAVAILABLE)
    ) {
      throw unavailable();
    }
    return { results };
  }

  async listActionLogs(auth: AuthContext, q: ActionLogQuery) {
    const orgId = requireOrg(auth);
    const page = await actionLogPage(this.deps.db, orgId, q, {
      id: q.id,
      wallet: q.wallet,
      object_id: q.object_id,
      name: q.name,
      hash: q.hash,
    });
    return {
      action_logs: page.items,
      next: page.next,
      has_more: page.has_more,
    };
  }

  /** Schema, expiry and signature (in that order), then membership of the caller's organization. */
  private async verify(auth: AuthContext, body: ExecuteBody): Promise<VerifiedAction> {
    const orgId = requireOrg(auth);
    const action = { ...body.action, params: body.action.params as Record<string, unknown> };
    checkParams(action.name, action.params);
    const expiresMs = Date.parse(action.expires);
    if (Number.isNaN(expiresMs)) {
      throw invalid('action.expires is not a date', [
        { field: 'action.expires', reason: 'date-time' },
      ]);
    }
    const nowMs = this.deps.clock.now().getTime();
    if (expiresMs > nowMs + MAX_EXPIRES_AHEAD_MS) {
      throw invalid('action.expires is more than 24 hours ahead', [
        { field: 'action.expires', reason: 'at most 24 hours after now' },
      ]);
    }
    if (expiresMs <= nowMs) {
      throw failedPrecondition(`the action expired at ${action.expires}`);
    }
    const text = textOf(this.deps.config.networkId, orgId, action);
    const result = await this.deps.verifier.verify({
      orgId,
      wallet: action.wallet,
      text,
      // Passkey ids are stored unpadded; padded and unpadded base64url are treated alike.
      signature:
        body.signature.type === 'webauthn'
          ? { type: 'webauthn', credential: unpadCredential(body.signature.credential) }
          : body.signature,
    });
    if (!result.ok) throw result.error;
    return {
      payerOrgId: orgId,
      walletId: result.signer.walletId,
      apiKeyId: auth.apiKeyId,
      walletAddress: result.signer.walletAddress,
      signerRole: result.signer.role,
      action,
      text,
      hash: actionHash(text),
      signature: body.signature,
      passkey: result.signer.passkey,
      credential: result.signer.credential,
      maxFeeWei: body.max_fee_wei !== undefined ? BigInt(body.max_fee_wei) : null,
    };
  }
}

function refused(err: unknown): BatchResult {
  if (isDatabaseUnavailable(err)) err = unavailable();
  if (err instanceof AppError) {
    return { status: 'refused', error: { code: err.code, message: err.message } };
  }
  return { status: 'refused', error: { code: Code.INTERNAL, message: 'internal error' } };
}
