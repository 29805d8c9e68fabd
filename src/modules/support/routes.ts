import type { App } from '../../http/app.js';
import { authOf } from '../../http/auth.js';
import { Empty, IdResponse } from '../organizations/index.js';
import type { SupportService } from './service.js';
import { clientSubject } from '../../lib/client-network.js';
import {
  ListSupportMessagesQuery,
  RequestAccessInput,
  SendSupportMessageInput,
  SupportMessage,
  SupportMessageList,
  SupportMessagePath,
} from './schema.js';

const tags = ['support'];

export function registerSupportRoutes(app: App, svc: SupportService) {
  app.post(
    '/support',
    {
      config: { permission: 'support.create', idempotent: true },
      schema: {
        tags,
        summary: 'SendSupportMessage',
        body: SendSupportMessageInput,
        response: { 200: IdResponse },
      },
    },
    async (req) => svc.send(authOf(req), req.body),
  );

  app.get(
    '/support',
    {
      config: { permission: 'support.read' },
      schema: {
        tags,
        summary: "ListSupportMessages: the caller's organization's messages",
        querystring: ListSupportMessagesQuery,
        response: { 200: SupportMessageList },
      },
    },
    async (req) => {
      const page = await svc.list(authOf(req), req.query);
      return { messages: page.items, next: page.next, has_more: page.has_more };
    },
  );

  app.get(
    '/support/:messageId',
    {
      config: { permission: 'support.read' },
      schema: {
        tags,
        summary: 'GetSupportMessage',
        params: SupportMessagePath,
        response: { 200: SupportMessage },
      },
    },
    async (req) => svc.get(authOf(req), req.params.messageId),
  );

  app.post(
    '/request-access',
    {
      config: { auth: 'none' },
      schema: {
        tags,
        summary: 'RequestAccess: ask for access to a feature (limited per client address)',
        body: RequestAccessInput,
        response: { 200: Empty },
      },
    },
    async (req) => {
      // Kept and counted as every per-address limit counts a client: an IPv4 address as it is,
      // an IPv6 one by its /64 (hopping addresses within it gains nothing).
      await svc.requestAccess(req.body, clientSubject(req.ip).replace(/^ip:/, ''));
      return {};
    },
  );
}
