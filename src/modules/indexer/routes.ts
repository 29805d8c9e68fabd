import type { App } from '../../http/app.js';
import { authOf } from '../../http/auth.js';
import { ObjectList } from '../objects/index.js';
import {
  HistoryList,
  HistoryParams,
  HistoryQuery,
  SearchQuery,
  StructuredQuery,
} from './schema.js';
import type { IndexerService } from './service.js';

const tags = ['indexer'];

export function registerIndexerRoutes(app: App, indexer: IndexerService) {
  app.get(
    '/indexer/search',
    {
      config: { permission: 'objects.read' },
      schema: {
        tags,
        summary: "Full-text search over the organization's objects",
        querystring: SearchQuery,
        response: { 200: ObjectList },
      },
    },
    async (req) => {
      const page = await indexer.search(authOf(req), req.query);
      return { objects: page.items, next: page.next, has_more: page.has_more };
    },
  );

  app.get(
    '/indexer/query',
    {
      config: { permission: 'objects.read' },
      schema: {
        tags,
        summary: 'Objects by template, owner and custom field equality (custom.<field>=<value>)',
        querystring: StructuredQuery,
        response: { 200: ObjectList },
      },
    },
    async (req) => {
      const page = await indexer.query(authOf(req), req.query);
      return { objects: page.items, next: page.next, has_more: page.has_more };
    },
  );

  app.get(
    '/indexer/objects/:id/history',
    {
      config: { permission: 'actions.read' },
      schema: {
        tags,
        summary: "An object's actions, newest first",
        params: HistoryParams,
        querystring: HistoryQuery,
        response: { 200: HistoryList },
      },
    },
    async (req) => {
      const page = await indexer.history(authOf(req), req.params.id, req.query);
      return { action_logs: page.items, next: page.next, has_more: page.has_more };
    },
  );

  app.get(
    '/public/objects/:id/history',
    {
      config: { auth: 'none' },
      schema: {
        tags,
        summary: "A public object's actions, newest first (no credential)",
        params: HistoryParams,
        querystring: HistoryQuery,
        response: { 200: HistoryList },
      },
    },
    async (req) => {
      const page = await indexer.publicHistory(req.params.id, req.query);
      return { action_logs: page.items, next: page.next, has_more: page.has_more };
    },
  );
}
