import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Executor } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { canonicalJson } from '../../lib/canonical-json.js';
import { AppError, Code, failedPrecondition, invalid, notFound } from '../../lib/errors.js';
import { requireOrg, type AuthContext } from '../../lib/permissions.js';
import { actionLogPage } from './action-logs.js';
import { actionHash, buildActionText, webauthnChallenge } from './action-text.js';
import { DECIMALS, TOKEN, type FeeQuote, type FeeService } from './fees.js';
import type { GroupCommitter } from './group-commit.js';
import { findWallet } from './repo/lookups.js';
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
/** Bound on an object's custom data (canonical JSON bytes). */
const MAX_CUSTOM_BYTES = 16 * 1024;

export interface EbusDeps {
  db: Executor;
  clock: Clock;
  config: Pick<Config, 'networkId'>;
  fees: FeeService;
  verifier: SignatureVerifier;
  committer: GroupCommitter;
  logger: Logger;
}

export type BatchResult =
  | { status: 'applied'; action: ActionLogRecord; object: AppliedAction['object'] }
  | { status: 'refused'; error: { code: number; message: string } };

/** Schema of the params for their action (400 code 3), checked before anything else. */
function checkParams(name: keyof typeof paramsCheckers, params: Record<string, unknown>): void {
  const checker = paramsCheckers[name];
  if (!checker.Check(params)) {
    const e = checker.Errors(params)[0];
    const field = `action.params${(e?.instancePath ?? '').replace(/\//g, '.')}`;
    const reason = e?.message ?? 'is invalid';
    throw invalid(`invalid ${name} params: ${field} ${reason}`, [{ field, reason }]);
  }
  const custom = (params as { custom?: unknown }).custom;
  if (custom !== undefined && Buffer.byteLength(canonicalJson(custom)) > MAX_CUSTOM_BYTES) {
    throw invalid(`custom is larger than ${MAX_CUSTOM_BYTES} bytes`, [
      { field: 'action.params.custom', reason: `at most ${MAX_CUSTOM_BYTES} bytes` },
    ]);
  }
}

/**
 * The event bus (spec §1 "four steps", design.md §5, §8): nonce, prepare, execute. Execute
 * checks schema, expiry and signature here (`verify`, with verify.ts), outside any
 * transaction, then submits the action to the group committer (group-commit.ts), whose
 * `GroupApplier` (apply-group.ts) checks nonce, rights (objects/actions/) and balance and
 * applies it.
 */
export class EbusService {
  constructor(private readonly deps: EbusDeps) {}

  /** Network facts a client needs to build the text itself. */
  network(): { network: string; token: string; decimals: number } {
    return { network: this.deps.config.networkId, token: TOKEN, decimals: DECIMALS };
  }

  fees(): Promise<FeeQuote> {
    return this.deps.fees.quote();
  }

  /** The next action number of the caller's wallet, or of a wallet of the caller's organization. */
  async nonce(auth: AuthContext, address?: string): Promise<{ address: string; nonce: number }> {
    const w = address
      ? await findWallet(this.deps.db, requireOrg(auth), { address: address.toLowerCase() })
      : await findWallet(this.deps.db, auth.orgId ?? '', { id: auth.walletId });
    if (!w || (address && !w.role)) throw notFound('wallet');
    return { address: w.address, nonce: w.next_nonce };
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
    const text = buildActionText({
      network: this.deps.config.networkId,
      organizationId: orgId,
      ...action,
    });
    return {
      text,
      action,
      hash: actionHash(text),
      challenge: webauthnChallenge(text),
      fee: await this.deps.fees.quote(),
    };
  }

  /** Checks and applies one signed action; throws the refusal. */
  async execute(auth: AuthContext, body: ExecuteBody) {
    const verified = await this.verify(auth, body);
    const outcome = await this.deps.committer.submit(verified);
    if (!outcome.ok) throw outcome.error;
    return { action: outcome.applied.log, object: outcome.applied.object };
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
    const results = await Promise.all(
      checked.map(async (c): Promise<BatchResult> => {
        if (!c.ok) return refused(c.err);
        const outcome = await this.deps.committer.submit(c.v);
        return outcome.ok
          ? { status: 'applied', action: outcome.applied.log, object: outcome.applied.object }
          : refused(outcome.error);
      }),
    );
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
    let text: string;
    try {
      text = buildActionText({
        network: this.deps.config.networkId,
        organizationId: orgId,
        ...action,
      });
    } catch (err) {
      throw invalid(`the action cannot be written as text: ${(err as Error).message}`);
    }
    const result = await this.deps.verifier.verify({
      orgId,
      wallet: action.wallet,
      text,
      signature: body.signature,
    });
    if (!result.ok) throw result.error;
    return {
      payerOrgId: orgId,
      walletId: result.signer.walletId,
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
  if (err instanceof AppError) {
    return { status: 'refused', error: { code: err.code, message: err.message } };
  }
  return { status: 'refused', error: { code: Code.INTERNAL, message: 'internal error' } };
}
