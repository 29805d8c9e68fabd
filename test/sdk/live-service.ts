import type { AddressInfo } from 'node:net';
import { startTestService, type TestService, type TestServiceOptions } from '../helpers/service.js';

/**
 * A whole service built as the other integration tests build it (every route, a fresh
 * database, a fake clock), listening on loopback so the SDK reaches it over real HTTP.
 */
export interface LiveService {
  svc: TestService;
  baseUrl: string;
  stop(): Promise<void>;
}

export async function startLiveService(opts: TestServiceOptions = {}): Promise<LiveService> {
  const svc = await startTestService(opts);
  await svc.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = svc.app.server.address() as AddressInfo;
  return { svc, baseUrl: `http://127.0.0.1:${port}`, stop: () => svc.stop() };
}

/** A `fetch` that records every call it passes on (method and path). */
export function recordingFetch() {
  const calls: { method: string; path: string; authorization: string | null }[] = [];
  const fetch = (request: Request) => {
    calls.push({
      method: request.method,
      path: new URL(request.url).pathname,
      authorization: request.headers.get('authorization'),
    });
    return globalThis.fetch(request);
  };
  return { fetch, calls };
}
