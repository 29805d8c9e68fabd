import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import { startTestService, type TestService, type TestServiceOptions } from './service.js';

export type Headers = Record<string, string>;
type Response = LightMyRequestResponse;

/** The calls on a service's app that the integration tests make over and over. */
export interface Requests {
  get: (url: string, headers?: Headers) => Promise<Response>;
  del: (url: string, headers?: Headers) => Promise<Response>;
  post: Send;
  put: Send;
  patch: Send;
}
/** Plain functions (no `this`): `const { post } = svc` is how the tests take them. */
type Send = (
  url: string,
  payload?: unknown,
  headers?: Headers,
  remoteAddress?: string,
) => Promise<Response>;

/** `get`, `post`, … on the service `of()` answers at the time of the call. */
export function requestsTo(of: () => TestService): Requests {
  const send =
    (method: 'POST' | 'PUT' | 'PATCH') =>
    (url: string, payload?: unknown, headers: Headers = {}, remoteAddress?: string) =>
      of().app.inject({
        method,
        url,
        headers,
        ...(payload === undefined ? {} : { payload: payload as object }),
        ...(remoteAddress === undefined ? {} : { remoteAddress }),
      });
  return {
    get: (url, headers = {}) => of().app.inject({ method: 'GET', url, headers }),
    del: (url, headers = {}) => of().app.inject({ method: 'DELETE', url, headers }),
    post: send('POST'),
    put: send('PUT'),
    patch: send('PATCH'),
  };
}

export type HarnessService = TestService & Requests;

/**
 * The preamble of an integration test file: a whole service on a fresh database
 * (startTestService), started in `beforeAll` and stopped in `afterAll`, with the request
 * shorthands of `requestsTo`.
 *
 *   const svc = useTestService();                       // or useTestService({ env: { … } })
 *   const { post, get } = svc;
 *   it('…', async () => { expect((await post('/x', { a: 1 }, m.headers)).statusCode)… });
 *
 * The answer stands for the service from the first test or hook on: its properties are the
 * started service's (read one before `beforeAll` has run and it throws), so it is passed to
 * the other helpers as the TestService it is. Options may be a function, called in
 * `beforeAll`, for options that need something made first.
 */
export function useTestService(
  options: TestServiceOptions | (() => TestServiceOptions | Promise<TestServiceOptions>) = {},
): HarnessService {
  let current: TestService | undefined;
  const started = (): TestService => {
    if (!current) throw new Error('useTestService: the service starts in beforeAll');
    return current;
  };
  beforeAll(async () => {
    current = await startTestService(typeof options === 'function' ? await options() : options);
  });
  afterAll(async () => {
    await current?.stop();
    current = undefined;
  });
  const requests = requestsTo(started);
  return new Proxy({} as HarnessService, {
    get(_, prop) {
      // Not a promise: `await` and async returns take it as it is.
      if (prop === 'then') return undefined;
      if (Object.hasOwn(requests, prop)) return requests[prop as keyof Requests];
      const svc = started();
      const value: unknown = Reflect.get(svc, prop, svc);
      return typeof value === 'function'
        ? (value as (...a: unknown[]) => unknown).bind(svc)
        : value;
    },
    has: (_, prop) => Object.hasOwn(requests, prop) || Reflect.has(started(), prop),
  });
}
