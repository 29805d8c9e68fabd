import type { App } from '../../http/app.js';
import { authOf } from '../../http/auth.js';
import type { DeliveryLogService } from './delivery-log.js';
import {
  CreateWebhookInput,
  Delivery,
  DeliveryList,
  Empty,
  EventParams,
  ListEventsQuery,
  ListOrganizationEventsQuery,
  ListWebhooksQuery,
  Queued,
  ReplayInput,
  UpdateWebhookInput,
  Webhook,
  WebhookList,
  WebhookParams,
  WebhookWithKey,
} from './schema.js';
import type { WebhookService } from './service.js';

const tags = ['webhooks'];

export function registerWebhookRoutes(app: App, webhooks: WebhookService, log: DeliveryLogService) {
  app.post(
    '/webhooks',
    {
      config: { permission: 'webhooks.create', idempotent: true },
      schema: {
        tags,
        summary: 'Create a webhook (the signing key is shown only here)',
        body: CreateWebhookInput,
        response: { 200: WebhookWithKey },
      },
    },
    async (req) => webhooks.create(authOf(req), req.body),
  );

  app.get(
    '/webhooks',
    {
      config: { permission: 'webhooks.read' },
      schema: {
        tags,
        summary: "List the organization's webhooks",
        querystring: ListWebhooksQuery,
        response: { 200: WebhookList },
      },
    },
    async (req) => webhooks.list(authOf(req), req.query),
  );

  app.get(
    '/webhooks/events',
    {
      config: { permission: 'webhooks.read' },
      schema: {
        tags,
        summary:
          "List the deliveries of all the organization's webhooks (status=open: those not delivered)",
        querystring: ListOrganizationEventsQuery,
        response: { 200: DeliveryList },
      },
    },
    async (req) => log.listForOrganization(authOf(req), req.query),
  );

  app.get(
    '/webhooks/:webhookId',
    {
      config: { permission: 'webhooks.read' },
      schema: { tags, summary: 'Get a webhook', params: WebhookParams, response: { 200: Webhook } },
    },
    async (req) => webhooks.get(authOf(req), req.params.webhookId),
  );

  app.put(
    '/webhooks/:webhookId',
    {
      config: { permission: 'webhooks.update' },
      schema: {
        tags,
        summary: 'Change a webhook (fields left out stay)',
        params: WebhookParams,
        body: UpdateWebhookInput,
        response: { 200: Webhook },
      },
    },
    async (req) => webhooks.update(authOf(req), req.params.webhookId, req.body),
  );

  app.delete(
    '/webhooks/:webhookId',
    {
      config: { permission: 'webhooks.delete' },
      schema: {
        tags,
        summary: 'Delete a webhook',
        params: WebhookParams,
        response: { 200: Empty },
      },
    },
    async (req) => {
      await webhooks.delete(authOf(req), req.params.webhookId);
      return {};
    },
  );

  app.post(
    '/webhooks/:webhookId/rotate-key',
    {
      config: { permission: 'webhooks.update' },
      schema: {
        tags,
        summary: 'Rotate the signing key (the old one signs too for 24 h)',
        params: WebhookParams,
        response: { 200: WebhookWithKey },
      },
    },
    async (req) => webhooks.rotateKey(authOf(req), req.params.webhookId),
  );

  app.get(
    '/webhooks/:webhookId/events',
    {
      config: { permission: 'webhooks.read' },
      schema: {
        tags,
        summary: "List a webhook's deliveries with their attempts",
        params: WebhookParams,
        querystring: ListEventsQuery,
        response: { 200: DeliveryList },
      },
    },
    async (req) => log.list(authOf(req), req.params.webhookId, req.query),
  );

  app.post(
    '/webhooks/:webhookId/events/:eventId/redeliver',
    {
      config: { permission: 'webhooks.update' },
      schema: {
        tags,
        summary: 'Send a failed or stopped delivery again (same X-Event-ID)',
        params: EventParams,
        response: { 200: Delivery },
      },
    },
    async (req) => log.redeliver(authOf(req), req.params.webhookId, req.params.eventId),
  );

  app.post(
    '/webhooks/:webhookId/replay',
    {
      config: { permission: 'webhooks.update' },
      schema: {
        tags,
        summary: 'Queue again the finished deliveries of a time range',
        params: WebhookParams,
        body: ReplayInput,
        response: { 200: Queued },
      },
    },
    async (req) => log.replay(authOf(req), req.params.webhookId, req.body),
  );
}
