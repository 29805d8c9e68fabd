import type { App } from '../../http/app.js';
import { authOf } from '../../http/auth.js';
import { PrivateActionParams, PrivateActionRecord } from './private-actions.js';
import {
  Batch,
  BatchList,
  BatchParams,
  InclusionProofSchema,
  ListBatchesQuery,
  ProofParams,
} from './schema.js';
import type { BatchExplorer } from './service.js';

const tags = ['batches'];

/**
 * What this URL serves for a sealed batch can still change: content showing actions of objects
 * made private since is replaced (docs/batches.md). So it is never `immutable`; a few seconds
 * let a cache in front take repeated requests without showing such actions much longer than
 * the service itself does.
 */
const CONTENT_CACHE_CONTROL = 'public, max-age=5';

/** The public explorer (docs/batches.md, "What is public"): no credential. */
export function registerBatchRoutes(app: App, explorer: BatchExplorer) {
  app.get(
    '/batches',
    {
      config: { auth: 'none' },
      schema: {
        tags,
        summary: 'Transaction batches, newest first',
        querystring: ListBatchesQuery,
        response: { 200: BatchList },
      },
    },
    async (req) => explorer.list(req.query),
  );

  app.get(
    '/batches/:batchId',
    {
      config: { auth: 'none' },
      schema: {
        tags,
        summary: 'A transaction batch',
        params: BatchParams,
        response: { 200: Batch },
      },
    },
    async (req) => explorer.get(req.params.batchId),
  );

  app.get(
    '/batches/:batchId/content',
    {
      config: { auth: 'none' },
      schema: {
        tags,
        summary: "A sealed batch's content: the bytes its ipfs_url names (RFC 8785 JSON)",
        params: BatchParams,
      },
    },
    async (req, reply) => {
      const content = await explorer.content(req.params.batchId);
      return reply
        .type('application/json')
        .header('cache-control', CONTENT_CACHE_CONTROL)
        .send(content);
    },
  );

  app.get(
    '/batches/:batchId/proofs/:actionId',
    {
      config: { auth: 'none' },
      schema: {
        tags,
        summary: "An action's RFC 6962 inclusion proof in its batch's actions_hash",
        params: ProofParams,
        response: { 200: InclusionProofSchema },
      },
    },
    async (req) => explorer.proof(req.params.batchId, req.params.actionId),
  );

  app.get(
    '/batches/:batchId/private-actions/:actionId',
    {
      config: { permission: 'objects.read' },
      schema: {
        tags,
        summary:
          "An action of the caller's organization in a batch, in full, with the salt of its commitment",
        params: PrivateActionParams,
        response: { 200: PrivateActionRecord },
      },
    },
    async (req) => explorer.privateAction(authOf(req), req.params.batchId, req.params.actionId),
  );
}
