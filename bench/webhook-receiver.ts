/**
 * The webhook benchmark's receiver (bench/webhooks.ts), in a process of its own: a real HTTPS
 * server with keep-alive that answers 200 at once and reports each delivery's arrival (the
 * action's id and the time, ms since the epoch) to its parent every 20 ms. In the
 * benchmark's own process it shared an event loop with the load generator, so every delivery
 * it took delayed the next execute request of a lane: the event bus measured slower for work
 * that is the receiver's, which runs on the customer's machines, not the service's.
 *
 * Started by `fork` with the certificate and key in RECEIVER_CERT and RECEIVER_KEY (PEM);
 * sends `{port}` once listening, then `{arrivals: [id, at][]}`.
 */
import { createServer } from 'node:https';
import { performance } from 'node:perf_hooks';

const send = (m: unknown) => process.send!(m);
let pending: [string, number][] = [];

const receiver = createServer(
  { cert: process.env.RECEIVER_CERT, key: process.env.RECEIVER_KEY, keepAliveTimeout: 30_000 },
  (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.timeOrigin + performance.now();
      const id = /"action":\{"id":"(act_[0-9A-Z]{26})"/.exec(
        Buffer.concat(chunks).toString('utf8'),
      )?.[1];
      if (id) pending.push([id, at]);
      res.writeHead(200, { 'content-length': '0' });
      res.end();
    });
  },
);

setInterval(() => {
  if (pending.length === 0) return;
  send({ arrivals: pending });
  pending = [];
}, 20).unref();

process.on('disconnect', () => {
  receiver.close();
  process.exit(0);
});

receiver.listen(0, '127.0.0.1', () => {
  send({ port: (receiver.address() as { port: number }).port });
});
