/**
 * `httpSource` waits out a service that asks it to come back (a 429 of the batch contents'
 * rate limit, a 503 of their build gate; docs/api.md, "Rate limits"): a whole-network check
 * reads every batch's content, more than the limit lets through at once.
 */
import { describe, expect, it } from 'vitest';
import { httpSource } from '../src/verify/index.js';

/** A fetch answering `answers` in turn, recording the URLs asked. */
function scripted(answers: (() => Response)[]) {
  const asked: string[] = [];
  const fetchFn = (async (url: string) => {
    asked.push(url);
    return answers[asked.length - 1]!();
  }) as unknown as typeof fetch;
  return { fetchFn, asked };
}

const wait = (status: number, retryAfter?: string) => () =>
  new Response(JSON.stringify({ code: status === 429 ? 8 : 14, message: 'later' }), {
    status,
    headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter },
  });
const ok = (body: string) => () => new Response(body, { status: 200 });

describe('httpSource', () => {
  it('waits out a 429 or 503 for its Retry-After (1 s without one) and reads again', async () => {
    const { fetchFn, asked } = scripted([wait(429, '2'), wait(503, '1'), wait(429), ok('{"a":1}')]);
    const slept: number[] = [];
    const source = httpSource('https://ons.example/', fetchFn, {
      sleep: async (ms) => void slept.push(ms),
    });
    expect(await source.json('/batches/bat_1/content')).toEqual({ a: 1 });
    expect(slept).toEqual([2000, 1000, 1000]);
    expect(asked).toEqual(Array(4).fill('https://ons.example/batches/bat_1/content'));
  });

  it('fails past its retries, on a wait longer than maxDelayMs, and on any other status', async () => {
    const sleep = async () => undefined;
    const tooMany = scripted([wait(429, '1'), wait(429, '1'), wait(429, '1')]);
    await expect(
      httpSource('https://ons.example', tooMany.fetchFn, { retries: 2, sleep }).bytes('/x'),
    ).rejects.toThrow('GET /x: HTTP 429');
    expect(tooMany.asked).toHaveLength(3);

    const long = scripted([wait(429, '120')]);
    await expect(
      httpSource('https://ons.example', long.fetchFn, { sleep }).bytes('/x'),
    ).rejects.toThrow('GET /x: HTTP 429');
    expect(long.asked).toHaveLength(1);

    const broken = scripted([wait(500, '1')]);
    await expect(
      httpSource('https://ons.example', broken.fetchFn, { sleep }).bytes('/x'),
    ).rejects.toThrow('GET /x: HTTP 500');
    expect(broken.asked).toHaveLength(1);

    const missing = scripted([() => new Response(null, { status: 404 })]);
    expect(await httpSource('https://ons.example', missing.fetchFn).bytes('/x')).toBeNull();
  });
});
