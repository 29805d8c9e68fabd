import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { bearer, signUp } from '../helpers/identity.js';
import { startTestService } from '../helpers/service.js';

/**
 * TRUST_PROXY (docs/self-hosting.md, "Behind a proxy"): which address a request counts as its
 * client's, the one per-address limits and sessions see. Behind one proxy that appends to
 * X-Forwarded-For, `true` lets a client choose its address; `1` (or the proxy's address) takes
 * the one the proxy saw.
 */
const RULE: { setting: string | undefined; client: string }[] = [
  { setting: undefined, client: '127.0.0.1' },
  { setting: 'false', client: '127.0.0.1' },
  { setting: '1', client: '7.7.7.7' },
  { setting: '127.0.0.1/32', client: '7.7.7.7' },
  { setting: '127.0.0.1, ::1', client: '7.7.7.7' },
  { setting: '2', client: '6.6.6.6' },
  // Every hop trusted: the address the client wrote itself (why `true` is not the advice).
  { setting: 'true', client: '5.5.5.5' },
];

describe('TRUST_PROXY', () => {
  it('parses a flag, a hop count or addresses, and refuses anything else', () => {
    const of = (v: string) => loadConfig({ TRUST_PROXY: v }).trustProxy;
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(of('true')).toBe(true);
    expect(of('0')).toBe(false);
    expect(of('1')).toBe(1);
    expect(of('10.0.0.0/8, 127.0.0.1')).toEqual(['10.0.0.0/8', '127.0.0.1']);
    expect(of('fd00::/8')).toEqual(['fd00::/8']);
    for (const bad of ['yes', '10.0.0.0/33', 'fd00::/129', 'proxy.local', '1.2.3.4/8/9', '-1']) {
      expect(() => of(bad), bad).toThrow(/TRUST_PROXY/);
    }
  });

  for (const { setting, client } of RULE) {
    it(`${setting ?? '(unset)'}: the client is ${client}`, async () => {
      const svc = await startTestService({
        env: setting === undefined ? {} : { TRUST_PROXY: setting },
      });
      try {
        // A client at 6.6.6.6 claims 5.5.5.5; the proxy at 7.7.7.7 appends, and a local one too.
        const acct = await signUp(svc);
        const login = await svc.app.inject({
          method: 'POST',
          url: '/auth/login',
          remoteAddress: '127.0.0.1',
          headers: { 'x-forwarded-for': '5.5.5.5, 6.6.6.6, 7.7.7.7' },
          payload: { email: acct.email, password: acct.password },
        });
        expect(login.statusCode, login.body).toBe(200);
        const tokens = login.json<{ access_token: string }>();
        const sessions = await svc.app.inject({
          method: 'GET',
          url: '/wallets/sessions',
          headers: bearer(tokens),
        });
        const current = sessions
          .json<{ sessions: { ip: string; current: boolean }[] }>()
          .sessions.find((s) => s.current)!;
        expect(current.ip).toBe(client);
      } finally {
        await svc.stop();
      }
    });
  }
});
