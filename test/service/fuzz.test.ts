import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allPermissions, createApiKey } from '../helpers/api-keys.js';
import { createMember } from '../helpers/fixtures.js';
import { insertObject, insertTemplate } from '../helpers/objects.js';
import {
  fuzzRequests,
  operationsOf,
  type FuzzRequest,
  type Operation,
} from '../helpers/fuzz-requests.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Property-based fuzzing of every operation /openapi.json describes: hostile path ids,
 * query strings, bodies and headers (NUL characters, lone surrogates, 1 MB strings, 20,000
 * levels of nesting, `__proto__` keys, wrong types, forged cursors, dates PostgreSQL
 * refuses), sent with no credential, a bearer token and an API key. Whatever is sent, the
 * answer is never a 5xx, every 4xx is the flat `{code, message}` body, and /readyz stays 200.
 *
 * FUZZ_RUNS sets the requests per operation (default 40, about 15 s here); FUZZ_SEED the
 * seed (fixed by default, so a failure repeats). For a longer hunt:
 *   FUZZ_RUNS=500 FUZZ_SEED=$RANDOM npx vitest run test/service/fuzz.test.ts
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 40);
const SEED = Number(process.env.FUZZ_SEED ?? 20261125);

let svc: TestService;
let operations: Operation[] = [];
let requestFor: ReturnType<typeof fuzzRequests>['requestFor'];

/** Operations that end the fuzzer's own credentials or organization run last. */
function destructiveness(op: Operation): number {
  if (op.path === '/auth/logout') return 3;
  if (op.method !== 'DELETE') return 0;
  if (op.path.startsWith('/wallets/sessions') || op.path === '/organizations/{organizationId}')
    return 2;
  return 1;
}

function describeRequest(r: FuzzRequest): string {
  const cut = (s: string) => (s.length > 300 ? `${s.slice(0, 300)}… (${s.length} chars)` : s);
  return `${r.method} ${cut(r.url)} ${JSON.stringify(r.headers)} ${cut(r.payload ?? '')}`;
}

beforeAll(async () => {
  svc = await startTestService();
  const owner = await createMember(svc, { role: 'owner' });
  const key = await createApiKey(svc, owner, allPermissions(), { name: 'fuzz' });
  const template = await insertTemplate(svc, owner.orgId, { isPublic: true });
  const object = await insertObject(svc, { templateId: template });
  const message = await svc.app.inject({
    method: 'POST',
    url: '/support',
    headers: owner.headers,
    payload: { title: 'fuzz', content: 'fuzz' },
  });
  ({ requestFor } = fuzzRequests({
    ids: {
      organization: owner.orgId,
      member: owner.memberId,
      wallet: owner.walletId,
      session: owner.sessionId,
      apiKey: key.id,
      template,
      object,
      message: message.json<{ id: string }>().id,
    },
    address: owner.address,
    email: owner.email,
    // Mostly real credentials, so most requests get past the auth hook.
    credentials: [
      ...Array<Record<string, string>>(4).fill(owner.headers),
      ...Array<Record<string, string>>(4).fill(key.headers),
      {},
      { authorization: 'Bearer not.a.jwt' },
      { 'x-api-key': 'onsk_\u0000' },
    ],
  }));
  const spec = await svc.app.inject({ method: 'GET', url: '/openapi.json' });
  operations = operationsOf(spec.json()).sort((a, b) => destructiveness(a) - destructiveness(b));
}, 60_000);

afterAll(async () => {
  await svc?.stop();
});

describe('fuzzing every operation of /openapi.json', () => {
  it('finds the operations to fuzz, path ids with their id patterns', () => {
    expect(operations.length).toBeGreaterThan(60);
    const pathParams = operations.flatMap((op) => op.parameters.filter((p) => p.in === 'path'));
    expect(pathParams.length).toBeGreaterThan(10);
  });

  it('never answers a 5xx, and every 4xx is the flat error body', async () => {
    const statuses: Record<string, number> = {};
    for (const [index, op] of operations.entries()) {
      await fc.assert(
        fc.asyncProperty(requestFor(op), async (req) => {
          const res = await svc.app.inject(req);
          const tally = `${op.method} ${op.path} ${res.statusCode}`;
          statuses[tally] = (statuses[tally] ?? 0) + 1;
          const where = `${describeRequest(req)} → ${res.statusCode} ${res.body.slice(0, 300)}`;
          expect(res.statusCode, where).toBeLessThan(500);
          if (res.statusCode >= 400) {
            let body: { code?: unknown; message?: unknown } = {};
            try {
              body = JSON.parse(res.body) as typeof body;
            } catch {
              expect.fail(`not JSON: ${where}`);
            }
            expect(Number.isInteger(body.code), where).toBe(true);
            expect(typeof body.message, where).toBe('string');
          }
        }),
        { seed: SEED + index, numRuns: RUNS, endOnFailure: true },
      );
    }
    if (process.env.FUZZ_STATS) console.log(statuses);
    const ready = await svc.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
  }, 600_000);
});
