import type { App } from '../../http/app.js';
import { authOf } from '../../http/auth.js';
import { answerExecuted } from '../../http/idempotency/replayed.js';
import {
  ActionLogList,
  ActionLogQuery,
  BatchBody,
  BatchResponse,
  ExecuteBody,
  ExecuteResponse,
  FeeQuoteSchema,
  NetworkResponse,
  NonceQuery,
  NonceResponse,
  PrepareBody,
  PrepareResponse,
} from './schema.js';
import type { EbusService } from './service.js';

const tags = ['event bus'];

export function registerEbusRoutes(app: App, ebus: EbusService) {
  app.get(
    '/ebus/nonce',
    {
      config: { permission: 'authenticated' },
      schema: {
        tags,
        summary:
          "The wallet's next action number and the caller's organization (the caller's wallet, ?address= of the organization, or the wallet ?signer= signs for)",
        querystring: NonceQuery,
        response: { 200: NonceResponse },
      },
    },
    async (req) => ebus.nonce(authOf(req), req.query),
  );

  app.post(
    '/ebus/prepare',
    {
      config: { permission: 'actions.create' },
      schema: {
        tags,
        summary: 'The exact text to sign for an action; changes nothing',
        body: PrepareBody,
        response: { 200: PrepareResponse },
      },
    },
    async (req) => ebus.prepare(authOf(req), req.body),
  );

  for (const url of ['/ebus/execute', '/ebus/actions']) {
    app.post(
      url,
      {
        config: { permission: 'actions.create' },
        schema: {
          tags,
          summary: 'Check, price and apply one signed action',
          body: ExecuteBody,
          response: { 200: ExecuteResponse },
        },
      },
      async (req, reply) => answerExecuted(reply, await ebus.execute(authOf(req), req.body)),
    );
  }

  app.post(
    '/ebus/actions/batch',
    {
      config: { permission: 'actions.create' },
      schema: {
        tags,
        summary: 'Up to 100 signed actions, answered per item in order',
        body: BatchBody,
        response: { 200: BatchResponse },
      },
    },
    async (req) => ebus.executeBatch(authOf(req), req.body),
  );

  app.get(
    '/ebus/action-logs',
    {
      config: { permission: 'actions.read' },
      schema: {
        tags,
        summary: "The organization's applied actions",
        querystring: ActionLogQuery,
        response: { 200: ActionLogList },
      },
    },
    async (req) => ebus.listActionLogs(authOf(req), req.query),
  );

  app.get(
    '/public/network',
    {
      config: { auth: 'none' },
      schema: { tags, summary: 'Network id and native token', response: { 200: NetworkResponse } },
    },
    async () => ebus.network(),
  );

  app.get(
    '/public/network/fees',
    {
      config: { auth: 'none' },
      schema: {
        tags,
        summary: 'The current price of one action',
        response: { 200: FeeQuoteSchema },
      },
    },
    async () => ebus.fees(),
  );
}
