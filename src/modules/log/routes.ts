import type { App } from '../../http/app.js';
import { notFound } from '../../lib/errors.js';
import {
  ConsistencyQuery,
  ConsistencyResponse,
  InclusionQuery,
  InclusionResponse,
  ReceiptParams,
  ReceiptResponse,
} from './schema.js';
import type { LogService } from './service.js';
import { parseTilePath } from './tiles.js';

const tags = ['log'];
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** A partial tile or the checkpoint changes with the next batch. */
const SHORT = 'public, max-age=1';

/**
 * The transparency log (docs/log.md): public, no credential, nothing private (entries are
 * action hashes, or a private action's commitment, exactly as the batches show them).
 */
export function registerLogRoutes(app: App, log: LogService) {
  app.get(
    '/log/checkpoint',
    {
      config: { auth: 'none' },
      schema: { tags, summary: 'The latest signed checkpoint (C2SP tlog-checkpoint)' },
    },
    async (_req, reply) => {
      const cp = await log.checkpoint();
      if (cp === null) throw notFound('checkpoint (the log is empty)');
      return reply
        .type('text/plain; charset=utf-8')
        .header('cache-control', 'no-store')
        .send(cp.text);
    },
  );

  app.get(
    '/log/tile/*',
    {
      config: { auth: 'none' },
      schema: {
        tags,
        summary: 'A tile of the tree or an entry bundle (C2SP tlog-tiles)',
        description:
          '`/log/tile/<L>/<N>[.p/<W>]` (hashes) and `/log/tile/entries/<N>[.p/<W>]` (each entry: 2-byte length ‖ 32 bytes)',
      },
    },
    async (req, reply) => {
      const rest = (req.params as { '*': string })['*'];
      const ref = rest.length <= 64 ? parseTilePath(rest) : null;
      if (ref === null) throw notFound('tile (not a tlog-tiles path)');
      const tile = await log.tile(ref);
      return reply
        .type('application/octet-stream')
        .header('cache-control', tile.full ? IMMUTABLE : SHORT)
        .send(tile.bytes);
    },
  );

  app.get(
    '/log/proof/inclusion',
    {
      config: { auth: 'none' },
      schema: {
        tags,
        summary: "An entry's inclusion proof in a tree size",
        querystring: InclusionQuery,
        response: { 200: InclusionResponse },
      },
    },
    async (req) => log.inclusion(req.query.hash.toLowerCase(), req.query.size),
  );

  app.get(
    '/log/proof/consistency',
    {
      config: { auth: 'none' },
      schema: {
        tags,
        summary: 'A consistency proof between two tree sizes',
        querystring: ConsistencyQuery,
        response: { 200: ConsistencyResponse },
      },
    },
    async (req) => log.consistency(req.query.from, req.query.to),
  );

  app.get(
    '/ebus/action-logs/:id/receipt',
    {
      config: { auth: 'optional', permission: 'actions.read' },
      schema: {
        tags,
        summary:
          "An action's self-contained receipt: its record, inclusion proof and signed checkpoint (its organization; anyone for a public object)",
        params: ReceiptParams,
        response: { 200: ReceiptResponse },
      },
    },
    async (req) => log.receipt(req.auth, req.params.id),
  );
}
