import { parentPort } from 'node:worker_threads';
import { computeHeader, type HeaderInput } from './header.js';

/**
 * The batch header thread (header-pool.ts): computes each header it is sent and answers it,
 * or the error's message, under the request's number.
 */
const port = parentPort!;
port.on('message', (m: { n: number; input: HeaderInput }) => {
  computeHeader(m.input).then(
    (header) => port.postMessage({ n: m.n, header }),
    (err: unknown) => port.postMessage({ n: m.n, error: (err as Error).message }),
  );
});
