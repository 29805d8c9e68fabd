import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { permissionsOfRole, type AuthContext } from '../../src/lib/permissions.js';
import { createEbus, type Ebus } from '../../src/modules/ebus/wiring.js';
import type { ExecuteBody } from '../../src/modules/ebus/schema.js';
import type { AppliedAction } from '../../src/modules/ebus/types.js';
import { useTestService } from '../helpers/harness.js';
import {
  ACTION_FEE,
  createSigner,
  createTemplate,
  fund,
  signEoa,
  snapshot,
  type EoaSigner,
} from '../helpers/ebus.js';

/**
 * Issue 7 acceptance 9: the extension point where batches and webhooks join the apply
 * transaction. A hook answers statements that run inside the group's one statement, so its
 * rows commit with the action and vanish with it.
 */
let ebus: Ebus;
const seen: AppliedAction[][] = [];
let failNext = false;

const svc = useTestService();
beforeAll(async () => {
  await svc.container.db.execute(
    sql`CREATE TABLE hook_rows (action_id text PRIMARY KEY, object_id text NOT NULL)`,
  );
  ebus = createEbus({
    db: svc.container.db,
    databaseUrl: svc.database.url,
    clock: svc.clock,
    config: svc.config,
    logger: svc.container.logger,
    hooks: {
      writes(applied) {
        seen.push([...applied]);
        const rows = applied.map((a) => ({ action_id: a.log.id, object_id: a.object.id }));
        // A failing hook: a NULL into a NOT NULL column.
        if (failNext) rows.forEach((r) => Object.assign(r, { object_id: null }));
        return [
          sql`INSERT INTO hook_rows (action_id, object_id)
            SELECT action_id, object_id FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
              AS r(action_id text, object_id text)
            RETURNING 1`,
        ];
      },
    },
  });
});
afterAll(() => ebus.close());

function authOf(signer: EoaSigner): AuthContext {
  return {
    kind: 'user',
    walletId: signer.walletId,
    orgId: signer.orgId,
    role: 'owner',
    permissions: permissionsOfRole('owner'),
    sessionId: null,
    apiKeyId: null,
  };
}

async function hookRows(): Promise<{ action_id: string; object_id: string }[]> {
  const { rows } = await svc.container.db.execute<{ action_id: string; object_id: string }>(
    sql`SELECT action_id, object_id FROM hook_rows ORDER BY action_id`,
  );
  return rows;
}

describe('apply hooks', () => {
  it('write their rows in the same transaction as the actions of a group', async () => {
    const owner = await createSigner(svc);
    await fund(svc, owner.orgId, ACTION_FEE * 10n);
    const templateId = await createTemplate(svc, owner.orgId);
    const bodies = await Promise.all(
      [0, 1, 2].map((nonce) =>
        signEoa(svc, owner, { name: 'mint', params: { template_id: templateId }, nonce }),
      ),
    );
    const out = await ebus.service.executeBatch(authOf(owner), {
      actions: bodies as unknown as ExecuteBody[],
    });
    expect(out.results.map((r) => r.status)).toEqual(['applied', 'applied', 'applied']);
    const applied = out.results.map((r) => (r.status === 'applied' ? r.action.id : ''));
    expect((await hookRows()).map((r) => r.action_id).sort()).toEqual([...applied].sort());
    // One call per group, with the group's applied actions only.
    expect(
      seen
        .flat()
        .map((a) => a.log.id)
        .sort(),
    ).toEqual([...applied].sort());
  });

  it('roll the action back with them when their statement fails', async () => {
    const owner = await createSigner(svc);
    await fund(svc, owner.orgId, ACTION_FEE * 10n);
    const templateId = await createTemplate(svc, owner.orgId);
    const before = await snapshot(svc, owner.orgId, owner.walletId);
    const rowsBefore = await hookRows();
    failNext = true;
    try {
      const body = await signEoa(svc, owner, {
        name: 'mint',
        params: { template_id: templateId },
        nonce: 0,
      });
      await expect(
        ebus.service.execute(authOf(owner), body as unknown as ExecuteBody),
      ).rejects.toMatchObject({
        code: 13,
      });
    } finally {
      failNext = false;
    }
    expect(await snapshot(svc, owner.orgId, owner.walletId)).toEqual(before);
    expect(await hookRows()).toEqual(rowsBefore);
  });
});
