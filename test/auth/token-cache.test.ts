import { describe, expect, it } from 'vitest';
import { useTestService } from '../helpers/harness.js';
import { createMember } from '../helpers/fixtures.js';

const svc = useTestService();

describe('verified access tokens are remembered', () => {
  it('still refuses a remembered token once it has expired', async () => {
    const m = await createMember(svc);
    const tokens = svc.container.tokens;
    const first = await tokens.verifyAccessToken(m.accessToken);
    expect(first.ok).toBe(true);
    svc.clock.advance(15 * 60_000 - 1_000);
    expect((await tokens.verifyAccessToken(m.accessToken)).ok).toBe(true);
    svc.clock.advance(1_000);
    expect(await tokens.verifyAccessToken(m.accessToken)).toEqual({
      ok: false,
      reason: 'access token expired',
    });
    const res = await svc.app.inject({ method: 'GET', url: '/api-keys', headers: m.headers });
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe(16);
  });

  it('does not remember a token that failed verification', async () => {
    const m = await createMember(svc);
    const [h, p] = m.accessToken.split('.');
    const forged = `${h}.${p}.${'A'.repeat(86)}`;
    expect((await svc.container.tokens.verifyAccessToken(forged)).ok).toBe(false);
    expect((await svc.container.tokens.verifyAccessToken(forged)).ok).toBe(false);
  });
});
