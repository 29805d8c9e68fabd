import { describe, expect, it } from 'vitest';
import type { HostResolver } from './address-policy.js';
import { refusedUrl } from './url-check.js';

const dns: Record<string, string[]> = {
  'public.example': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
  'private.example': ['10.0.0.7'],
  'mixed.example': ['93.184.215.14', '192.168.0.10'],
  'metadata.example': ['169.254.169.254'],
  'loop.example': ['127.0.0.1'],
  'ula.example': ['fd12::1'],
  'mapped.example': ['::ffff:10.0.0.1'],
};
const resolve: HostResolver = async (host) => {
  const found = dns[host];
  if (!found) throw new Error('ENOTFOUND');
  return found;
};
const closed = { allowLoopback: false };
const open = { allowLoopback: true };

describe('refusedUrl', () => {
  it('refuses a name whose resolver does not answer in time', async () => {
    const silent: HostResolver = () => new Promise(() => {});
    const started = performance.now();
    expect(await refusedUrl('https://slow.example/hook', closed, silent, 50)).toBe(
      'slow.example does not resolve within 0.05 s',
    );
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('accepts a name whose every address is public', async () => {
    expect(await refusedUrl('https://public.example/hook', closed, resolve)).toBeNull();
  });

  it.each([
    ['private.example', '10.0.0.7', 'private'],
    ['mixed.example', '192.168.0.10', 'private'],
    ['metadata.example', '169.254.169.254', 'link-local'],
    ['loop.example', '127.0.0.1', 'loopback'],
    ['ula.example', 'fd12::1', 'unique local'],
    ['mapped.example', '::ffff:10.0.0.1', 'IPv4-mapped'],
  ])(
    'refuses %s without naming its address (%s) to the caller; the detail goes to the log',
    async (host, address, range) => {
      const told: unknown[] = [];
      const why = await refusedUrl(`https://${host}/hook`, closed, resolve, undefined, (d) =>
        told.push(d),
      );
      expect(why).toBe(`${host} resolves to a non-public address`);
      expect(told).toEqual([{ host, address, range: expect.stringContaining(range) }]);
    },
  );

  it('refuses a name that does not resolve', async () => {
    expect(await refusedUrl('https://nowhere.example/hook', closed, resolve)).toBe(
      'nowhere.example does not resolve',
    );
  });

  it('names the range of an address written in the URL (the caller wrote it)', async () => {
    expect(await refusedUrl('https://10.0.0.7/hook', closed, resolve)).toBe(
      '10.0.0.7 is private (RFC 1918)',
    );
  });

  it('opens loopback only, by address or name, when loopback is allowed', async () => {
    expect(await refusedUrl('https://127.0.0.1:9443/h', open, resolve)).toBeNull();
    expect(await refusedUrl('https://[::1]:9443/h', open, resolve)).toBeNull();
    expect(await refusedUrl('https://loop.example/h', open, resolve)).toBeNull();
    expect(await refusedUrl('https://0.0.0.0/h', open, resolve)).toContain('unspecified');
    expect(await refusedUrl('https://[::]/h', open, resolve)).toContain('unspecified');
    expect(await refusedUrl('https://private.example/h', open, resolve)).toContain('non-public');
  });

  it('refuses an address longer than 2048 characters', async () => {
    expect(
      await refusedUrl(`https://public.example/${'a'.repeat(2048)}`, closed, resolve),
    ).toContain('longer');
  });
});
