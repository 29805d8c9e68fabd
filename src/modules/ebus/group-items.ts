import { AppError, Code, unauthenticated } from '../../lib/errors.js';
import type { MintParams, ObjectParams } from '../objects/index.js';
import type { TemplateInfo } from '../objects/index.js';
import type { SigningCredential, VerifiedAction } from './types.js';

// What the group's steps (plan.ts) and its paths (apply-group.ts) ask of an action, and the
// refusals they give.

/** A signing credential of a wallet, as one string (GroupState.liveCredentials). */
export const credentialKey = (walletId: string, c: SigningCredential): string =>
  `${walletId} ${c.type} ${c.externalId}`;

export const removedCredential = (): AppError =>
  unauthenticated('the signature comes from a credential that was removed');

export const isMint = (v: VerifiedAction): boolean => v.action.name === 'mint';

export const mintTemplateId = (v: VerifiedAction): string =>
  (v.action.params as MintParams).template_id;

export const objectIdOf = (v: VerifiedAction): string =>
  (v.action.params as ObjectParams).object_id;

export const nonceError = (given: number, next: number): AppError =>
  given < next
    ? new AppError(
        Code.ABORTED,
        `nonce ${given} was already used (replayed); the wallet's next nonce is ${next}`,
      )
    : new AppError(
        Code.ABORTED,
        `nonce ${given} is out of order; the wallet's next nonce is ${next}`,
      );

export const insufficientBalance = (feeWei: bigint): AppError =>
  new AppError(
    Code.FAILED_PRECONDITION,
    `insufficient balance: the action costs ${feeWei} wei`,
    { fee_wei: feeWei.toString() },
    402,
  );

/** Mints whose template belongs to another organization: their signer's role there. */
export function crossOrgMints(
  orgId: string,
  items: readonly VerifiedAction[],
  templates: ReadonlyMap<string, TemplateInfo>,
): { orgId: string; walletId: string }[] {
  return items.flatMap((i) => {
    const t = isMint(i) ? templates.get(mintTemplateId(i)) : undefined;
    return t && t.organization_id !== orgId
      ? [{ orgId: t.organization_id, walletId: i.walletId }]
      : [];
  });
}
