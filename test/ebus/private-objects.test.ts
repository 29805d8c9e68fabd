import { beforeAll, describe, expect, it } from 'vitest';
import {
  ACTION_FEE,
  createSigner,
  createTemplate,
  fund,
  signEoa,
  type EoaSigner,
} from '../helpers/ebus.js';
import { useTestService } from '../helpers/harness.js';

/**
 * A private object, or another organization's private template, is not there for a signer
 * outside its organization who does not own it (docs/ebus.md, "Refusals"): every action
 * answers exactly as for an id that does not exist, so no refusal tells that it exists, its
 * state or (through a pickup) its data. Generated from the actions on an object, in every
 * state a refusal could tell.
 */
const svc = useTestService();

const nonces = new Map<string, number>();
async function act(signer: EoaSigner, name: string, params: Record<string, unknown>) {
  const nonce = nonces.get(signer.walletId) ?? 0;
  const body = await signEoa(svc, signer, { name, params, nonce });
  const res = await svc.app.inject({
    method: 'POST',
    url: '/ebus/execute',
    headers: signer.headers,
    payload: body,
  });
  if (res.statusCode === 200) nonces.set(signer.walletId, nonce + 1);
  return res;
}

/** A funded owner of a new organization, and a template of it. */
async function organization(isPublic: boolean) {
  const owner = await createSigner(svc);
  await fund(svc, owner.orgId, ACTION_FEE * 100n);
  return { owner, templateId: await createTemplate(svc, owner.orgId, { isPublic }) };
}

const SECRET = 'the-secret-4711';
const location = { latitude: 52.5, longitude: 13.4 };
const ACTIONS: [string, (id: string, to: string) => Record<string, unknown>][] = [
  ['transfer', (id, to) => ({ object_id: id, to })],
  ['update', (id) => ({ object_id: id, custom: { n: 1 } })],
  ['redeem', (id) => ({ object_id: id })],
  ['drop', (id) => ({ object_id: id, location })],
  ['pickup', (id) => ({ object_id: id })],
];

let a: Awaited<ReturnType<typeof organization>>;
let outsider: EoaSigner;
beforeAll(async () => {
  a = await organization(false);
  outsider = (await organization(true)).owner;
});

async function mint(owner: EoaSigner, templateId: string) {
  const res = await act(owner, 'mint', { template_id: templateId, custom: { secret: SECRET } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ object: { id: string } }>().object.id;
}

/** What the outsider is answered for an object id that does not exist. */
async function missing(name: string, params: (id: string, to: string) => Record<string, unknown>) {
  const res = await act(outsider, name, params('obj_01M8G7T9M3WJ6ER14NZD8J36PV', outsider.address));
  expect(res.statusCode, res.body).toBe(404);
  return res.json<{ code: number }>();
}

describe("another organization's private object", () => {
  // Live, dropped and redeemed: each state a refusal could otherwise name.
  for (const state of ['live', 'dropped', 'redeemed'] as const) {
    for (const [name, params] of ACTIONS) {
      it(`${name} of a ${state} one answers as for a missing object`, async () => {
        const id = await mint(a.owner, a.templateId);
        if (state === 'dropped') {
          expect((await act(a.owner, 'drop', { object_id: id, location })).statusCode).toBe(200);
        }
        if (state === 'redeemed') {
          expect((await act(a.owner, 'redeem', { object_id: id })).statusCode).toBe(200);
        }
        const res = await act(outsider, name, params(id, outsider.address));
        expect(res.statusCode, res.body).toBe(404);
        expect(res.json()).toEqual({
          ...(await missing(name, params)),
          message: `object ${id} not found`,
        });
        expect(res.body).not.toContain(SECRET);
      });
    }
  }

  it('is acted on by a member of its organization, and by a wallet outside it that owns it', async () => {
    const id = await mint(a.owner, a.templateId);
    expect((await act(a.owner, 'drop', { object_id: id, location })).statusCode).toBe(200);
    // Another member of A picks it up: the organization's own object.
    const colleague = await createSigner(svc, { orgId: a.owner.orgId, role: 'member' });
    const picked = await act(colleague, 'pickup', { object_id: id });
    expect(picked.statusCode, picked.body).toBe(200);
    // Given to the outsider's wallet, it is the outsider's to act on.
    const given = await act(colleague, 'transfer', { object_id: id, to: outsider.address });
    expect(given.statusCode, given.body).toBe(200);
    const updated = await act(outsider, 'update', { object_id: id, custom: { n: 2 } });
    expect(updated.statusCode, updated.body).toBe(200);
  });

  it("made private while the committer remembers it public, stays out of an outsider's reach", async () => {
    // A's dropped object, acted on just now (so the committer remembers it, public) …
    const pub = await organization(true);
    const id = await mint(pub.owner, pub.templateId);
    expect((await act(pub.owner, 'drop', { object_id: id, location })).statusCode).toBe(200);
    // … then its template goes private, which changes no object's version.
    const sw = await svc.app.inject({
      method: 'PUT',
      url: `/templates/${pub.templateId}`,
      headers: pub.owner.headers,
      payload: { is_public: false },
    });
    expect(sw.statusCode, sw.body).toBe(200);
    // The outsider makes the committer forget what it remembers of templates: an edit of
    // its own template between two of its mints fails an optimistic group's guard.
    const mine = await organization(true);
    await mint(mine.owner, mine.templateId);
    const edit = await svc.app.inject({
      method: 'PUT',
      url: `/templates/${mine.templateId}`,
      headers: mine.owner.headers,
      payload: { name: 'renamed' },
    });
    expect(edit.statusCode, edit.body).toBe(200);
    await mint(mine.owner, mine.templateId);
    const res = await act(mine.owner, 'pickup', { object_id: id });
    expect(res.statusCode, res.body).toBe(404);
    expect(res.body).not.toContain(SECRET);
    const owner = await svc.app.inject({
      method: 'GET',
      url: `/objects/${id}`,
      headers: pub.owner.headers,
    });
    expect(owner.json<{ owner: string }>().owner).toBe(pub.owner.address);
  });

  it('a public one still tells an outsider why (not the owner: 403)', async () => {
    const pub = await organization(true);
    const id = await mint(pub.owner, pub.templateId);
    const res = await act(outsider, 'transfer', { object_id: id, to: outsider.address });
    expect(res.statusCode, res.body).toBe(403);
  });
});

describe("another organization's template", () => {
  it('a private one answers a mint by a non-member as a missing template; a public one 403', async () => {
    const missingTemplate = await act(outsider, 'mint', {
      template_id: 'tpl_01M8G7T9M3WJ6ER14NZD8J36PV',
    });
    expect(missingTemplate.statusCode).toBe(404);
    const hidden = await act(outsider, 'mint', { template_id: a.templateId });
    expect(hidden.statusCode, hidden.body).toBe(404);
    expect(hidden.json()).toEqual({
      ...missingTemplate.json<object>(),
      message: `template ${a.templateId} not found`,
    });
    const pub = await organization(true);
    const open = await act(outsider, 'mint', { template_id: pub.templateId });
    expect(open.statusCode, open.body).toBe(403);
  });
});
