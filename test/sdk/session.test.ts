import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, createOnsClient, OnsError, type Session } from '@ons/sdk';
import { createApiKey } from '../helpers/api-keys.js';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { sessionEnded } from '../helpers/identity.js';
import { recordingFetch, startLiveService, type LiveService } from './live-service.js';

let live: LiveService;
beforeAll(async () => {
  live = await startLiveService();
});
afterAll(async () => {
  await live.stop();
});

const MINUTE = 60_000;
const sessionOf = (m: TestMember): Session => ({
  access_token: m.accessToken,
  refresh_token: m.refreshToken,
});
/** Past the access token's 15 minutes (the service's fake clock). */
const expireAccessTokens = () => live.svc.clock.advance(16 * MINUTE);
const refreshes = (calls: { path: string }[]) =>
  calls.filter((c) => c.path === '/auth/refresh-token').length;

describe('a session client', () => {
  it('sends the access token, and on a 401 refreshes once and repeats the call', async () => {
    const member = await createMember(live.svc);
    const seen: (Session | null)[] = [];
    const rec = recordingFetch();
    const ons = createOnsClient({
      baseUrl: live.baseUrl,
      session: sessionOf(member),
      onSession: (s) => seen.push(s),
      fetch: rec.fetch,
    });
    expect((await ons.GET('/wallets/me')).id).toBe(member.walletId);
    expect(rec.calls[0]!.authorization).toBe(`Bearer ${member.accessToken}`);

    expireAccessTokens();
    const me = await ons.GET('/wallets/me');
    expect(me.id).toBe(member.walletId);
    expect(rec.calls.slice(1).map((c) => `${c.method} ${c.path}`)).toEqual([
      'GET /wallets/me', // 401: expired
      'POST /auth/refresh-token',
      'GET /wallets/me',
    ]);
    expect(seen).toHaveLength(1);
    expect(ons.session).toEqual(seen[0]);
    expect(ons.session!.refresh_token).not.toBe(member.refreshToken);
    expect(rec.calls[3]!.authorization).toBe(`Bearer ${ons.session!.access_token}`);
    expect(await sessionEnded(live.svc, member.sessionId)).toBe(false);
  });

  it('shares one refresh among concurrent calls that all meet an expired token', async () => {
    const member = await createMember(live.svc);
    const rec = recordingFetch();
    let told = 0;
    const ons = createOnsClient({
      baseUrl: live.baseUrl,
      session: sessionOf(member),
      onSession: () => (told += 1),
      fetch: rec.fetch,
    });
    expireAccessTokens();
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        i % 2 === 0 ? ons.GET('/wallets/me') : ons.GET('/wallets/sessions'),
      ),
    );
    expect(answers).toHaveLength(12);
    expect(refreshes(rec.calls)).toBe(1);
    expect(told).toBe(1);
    // A second refresh would have spent the rotated token twice, which ends the session.
    expect(await sessionEnded(live.svc, member.sessionId)).toBe(false);

    // Later waves refresh again, once each.
    expireAccessTokens();
    await Promise.all([ons.GET('/wallets/me'), ons.GET('/wallets/me'), ons.GET('/wallets/me')]);
    expect(refreshes(rec.calls)).toBe(2);
    expect(await sessionEnded(live.svc, member.sessionId)).toBe(false);
  });

  it('without the SDK’s guard two refreshes at once end the session (what the guard prevents)', async () => {
    const member = await createMember(live.svc);
    const refresh = () =>
      fetch(`${live.baseUrl}/auth/refresh-token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ refresh_token: member.refreshToken }),
      });
    const first = await refresh();
    expect(first.status).toBe(200);
    expect((await refresh()).status).toBe(401);
    expect(await sessionEnded(live.svc, member.sessionId)).toBe(true);
  });

  it('refreshes only once per call: a second 401 surfaces as OnsError', async () => {
    const member = await createMember(live.svc);
    const rec = recordingFetch();
    // A call that keeps getting 401 whatever the token: the answer to GET /wallets/me is
    // replaced here by a 401 (the request still reaches the service and is recorded).
    const ons = createOnsClient({
      baseUrl: live.baseUrl,
      session: sessionOf(member),
      fetch: async (request) => {
        const answer = await rec.fetch(request);
        if (new URL(request.url).pathname !== '/wallets/me') return answer;
        return new Response(JSON.stringify({ code: 16, message: 'always refused' }), {
          status: 401,
          headers: { 'content-type': 'application/json', 'x-request-id': 'req_stub' },
        });
      },
    });
    const err = await ons.GET('/wallets/me').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OnsError);
    expect(err).toMatchObject({ code: Code.UNAUTHENTICATED, status: 401, requestId: 'req_stub' });
    expect(rec.calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      'GET /wallets/me',
      'POST /auth/refresh-token',
      'GET /wallets/me',
    ]);
    expect(ons.session).not.toBeNull();
  });

  it('when the refresh is refused, surfaces the 401 and reports the session over', async () => {
    const member = await createMember(live.svc);
    const rec = recordingFetch();
    const seen: (Session | null)[] = [];
    const ons = createOnsClient({
      baseUrl: live.baseUrl,
      session: sessionOf(member),
      onSession: (s) => seen.push(s),
      fetch: rec.fetch,
    });
    await ons.POST('/auth/logout');
    const err = await ons.GET('/wallets/me').catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'OnsError', code: Code.UNAUTHENTICATED, status: 401 });
    expect(seen).toEqual([null]);
    expect(ons.session).toBeNull();
    expect(refreshes(rec.calls)).toBe(1);
    // Signed out now: calls go without a credential, and nothing more is refreshed.
    await expect(ons.GET('/wallets/me')).rejects.toMatchObject({ message: 'no auth provided' });
    expect(refreshes(rec.calls)).toBe(1);
  });

  it('takes a sign-in answer as it comes and a later one replaces it', async () => {
    const member = await createMember(live.svc);
    const other = await createMember(live.svc);
    const ons = createOnsClient({ baseUrl: live.baseUrl });
    await expect(ons.GET('/wallets/me')).rejects.toMatchObject({ status: 401 });
    ons.setSession({ ...sessionOf(member), token_type: 'Bearer' } as Session);
    expect((await ons.GET('/wallets/me')).id).toBe(member.walletId);
    ons.setSession(sessionOf(other));
    expect((await ons.GET('/wallets/me')).id).toBe(other.walletId);
    ons.setSession(null);
    await expect(ons.GET('/wallets/me')).rejects.toMatchObject({ status: 401 });
  });
});

describe('an API key client', () => {
  it('sends x-api-key and never tries to refresh', async () => {
    const owner = await createMember(live.svc, { role: 'owner' });
    const key = await createApiKey(live.svc, owner, ['templates.read']);
    const rec = recordingFetch();
    const ons = createOnsClient({ baseUrl: live.baseUrl, apiKey: key.secret, fetch: rec.fetch });
    expect((await ons.GET('/templates')).templates).toEqual([]);
    // Revoked: 401, and the SDK has nothing to refresh.
    await live.svc.app.inject({
      method: 'DELETE',
      url: `/api-keys/${key.id}`,
      headers: owner.headers,
    });
    await expect(ons.GET('/templates')).rejects.toMatchObject({ status: 401, code: 16 });
    expect(refreshes(rec.calls)).toBe(0);
    expect(rec.calls.every((c) => c.authorization === null)).toBe(true);
  });

  it('is refused beside a session: one credential per client', () => {
    expect(() =>
      createOnsClient({
        baseUrl: live.baseUrl,
        apiKey: 'onsk_x',
        session: { access_token: 'a', refresh_token: 'r' },
      }),
    ).toThrow(/either an API key or a session/);
  });
});

describe('the refresh route itself', () => {
  it('is called as any route: its own 401 is not refreshed again', async () => {
    const member = await createMember(live.svc);
    const rec = recordingFetch();
    const ons = createOnsClient({
      baseUrl: live.baseUrl,
      session: sessionOf(member),
      fetch: rec.fetch,
    });
    await expect(
      ons.POST('/auth/refresh-token', { body: { refresh_token: 'not-a-token' } }),
    ).rejects.toMatchObject({ status: 401, code: 16 });
    expect(rec.calls).toHaveLength(1);
  });
});
