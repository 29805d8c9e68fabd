import { createHash, randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { TestApiKey } from '../helpers/api-keys.js';
import type { HarnessService } from '../helpers/harness.js';
import type { Needle, World } from './world.js';

/**
 * What no outsider may find in an answer of the organization test/privacy/world.ts builds:
 * the marker of every private field, and each private id, hash, signature and secret, read
 * back from the database. Private objects' and actions' ids are marked `explorer`: the batch
 * explorer shows them (docs/batches.md, "What is public"). An object made private later keeps
 * its actions' hashes and integrity hashes public (they are in signed roots), so they are no
 * needles; everything else of it is.
 */
/** The marker in every private field, and one in public ones (what public answers must show). */
export const MARK = `PRIVATE-MARKER-${randomBytes(6).toString('hex')}`;
export const PUBLIC_MARK = `PUBLIC-MARK-${randomBytes(6).toString('hex')}`;

const leafHash = (hash: string) =>
  `0x${createHash('sha256')
    .update(Buffer.of(0))
    .update(Buffer.from(hash.slice(2), 'hex'))
    .digest('hex')}`;

export async function needlesOf(
  svc: HarnessService,
  w: Omit<World, 'needles'>,
  more: {
    apiKey: TestApiKey;
    webhook: { id: string; signing_key: string };
    policyId: string;
    messageId: string;
    depositId: string;
    privateFileHash: string;
  },
): Promise<Needle[]> {
  const db = svc.container.db;
  const n = (label: string, value: string | null | undefined): Needle[] =>
    value ? [{ label, value }] : [];
  const ids = JSON.stringify(w.privateObjects);
  const actions = await db.execute<{ id: string; hash: string; sig: string; ih: string }>(
    sql`SELECT id, hash, signature::text AS sig, integrity_hash AS ih FROM action_logs
      WHERE object_id IN (SELECT jsonb_array_elements_text(${ids}::jsonb)) ORDER BY seq`,
  );
  const later = w.madePrivate;
  const laterActions = await db.execute<{ id: string; sig: string }>(
    sql`SELECT id, signature::text AS sig FROM action_logs WHERE object_id = ${later.object}`,
  );
  const objects = await db.execute<{ s: string; c: string; i: string; h: string | null }>(
    sql`SELECT state_hash AS s, content_hash AS c,
        CASE WHEN id <> ${later.object} THEN integrity_hash END AS i,
        CASE WHEN custom <> '{}'::jsonb THEN custom_hash END AS h
      FROM objects WHERE id IN (SELECT jsonb_array_elements_text(${ids}::jsonb))
        OR id = ${later.object}`,
  );
  const sessions = await db.execute<{ id: string }>(
    sql`SELECT s.id FROM sessions s JOIN members mb ON mb.wallet_id = s.wallet_id
      WHERE mb.organization_id = ${w.orgId}`,
  );
  const balance = await db.execute<{ b: string }>(
    sql`SELECT balance_wei::text AS b FROM organizations WHERE id = ${w.orgId}`,
  );
  return [
    { label: 'marker', value: MARK },
    { label: 'private template', value: w.privateTemplate },
    ...w.privateObjects.map((value) => ({
      label: 'private object',
      value,
      explorer: true as const,
    })),
    ...actions.rows.flatMap((r) => [
      { label: 'private action', value: r.id, explorer: true as const },
      ...n('private action hash', r.hash),
      ...n('private action leaf hash', leafHash(r.hash)),
      ...n('private integrity hash', r.ih),
      ...n('private signature', JSON.parse(r.sig).signature as string | undefined),
    ]),
    // Made private later: its hashes stay public, nothing else of it.
    { label: 'template made private', value: later.template },
    { label: 'object made private', value: later.object, explorer: true as const },
    ...n('owner of an object made private', later.owner),
    ...laterActions.rows.flatMap((r) => [
      ...n(
        'signature of an object made private',
        JSON.parse(r.sig).signature as string | undefined,
      ),
    ]),
    ...objects.rows.flatMap((r) => [
      ...n('private state hash', r.s),
      ...n('private content hash', r.c),
      ...n('private object integrity hash', r.i),
      ...n('private custom hash', r.h),
    ]),
    ...n('private geohash', w.privateGeoHash),
    ...n('owner of a private object', w.recipient),
    ...n('owner of a private object', w.keeper.address),
    ...n('private signer', w.hidden.address),
    ...n('private signer', w.passkeyPrivate.address),
    ...n('private passkey', w.passkeyPrivate.authenticator.credentialId),
    ...[w.owner, w.hidden, w.keeper, w.passkeyPublic, w.passkeyPrivate].flatMap((x) => [
      ...n('wallet id', x.walletId),
      ...n('member id', x.memberId),
      ...n('email', x.email),
    ]),
    ...sessions.rows.flatMap((r) => n('session id', r.id)),
    ...n('invitation id', w.invitation.id),
    ...n('invitation email', w.invitation.email),
    ...n('invitation token', w.invitation.token),
    ...n('api key id', more.apiKey.id),
    ...n('api key secret', more.apiKey.secret),
    ...n('api key prefix', more.apiKey.secret.slice(0, 12)),
    ...n('webhook id', more.webhook.id),
    ...n('webhook signing key', more.webhook.signing_key),
    ...n('policy id', more.policyId),
    ...n('support message id', more.messageId),
    ...n('deposit id', more.depositId),
    ...n('balance', balance.rows[0]!.b),
    ...n('private file id', w.privateFile),
    ...n('private file hash', more.privateFileHash),
  ];
}
