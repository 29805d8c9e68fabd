/**
 * A call's path parameters never make it another path: `.` and `..` stay dot segments after
 * percent-encoding, and the URL resolves them (`/organizations/../invitation` is
 * `/invitation`), so a value taken from a link would send the call, and its credential,
 * elsewhere.
 */
import { describe, expect, it } from 'vitest';
import { Code, createOnsClient, isOnsError } from '../src/index.js';

function recording() {
  const asked: string[] = [];
  const ons = createOnsClient({
    baseUrl: 'https://ons.example',
    apiKey: 'onsk_test',
    retry: false,
    fetch: async (request: Request) => {
      asked.push(request.url);
      return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
    },
  });
  return { ons, asked };
}

describe('path parameters', () => {
  it.each(['..', '.'])('refuses %j before any request, with code 3', async (value) => {
    const { ons, asked } = recording();
    const call = ons.GET('/organizations/{organizationId}/invitation', {
      params: { path: { organizationId: value }, query: { member_id: 'mem_1', token: 't' } },
    });
    const err: unknown = await call.catch((e: unknown) => e);
    expect(isOnsError(err)).toBe(true);
    expect(err).toMatchObject({ code: Code.INVALID_ARGUMENT, status: 0 });
    expect((err as Error).message).toContain('organizationId');
    await expect(
      ons.raw.GET('/objects/{id}', { params: { path: { id: value } } }),
    ).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT });
    expect(asked).toEqual([]);
  });

  it('encodes any other value into its one segment', async () => {
    const { ons, asked } = recording();
    for (const id of ['obj_01', '../wallets/me', '...', '%2e%2e', 'a b?c#d']) {
      await ons.GET('/objects/{id}', { params: { path: { id } } });
    }
    expect(asked).toEqual([
      'https://ons.example/objects/obj_01',
      'https://ons.example/objects/..%2Fwallets%2Fme',
      'https://ons.example/objects/...',
      'https://ons.example/objects/%252e%252e',
      'https://ons.example/objects/a%20b%3Fc%23d',
    ]);
  });
});
