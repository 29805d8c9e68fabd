import type { Probe, Surface } from './surfaces.js';
import { MARK, type World } from './world.js';

/**
 * Every GET route that needs a credential, called by a member (or key) of ANOTHER
 * organization with the first organization's ids: its records are 404 there, as missing
 * ones (docs/api.md, "Identifiers"; docs/permissions.md), and the caller's own lists and
 * filters never reach them. `status` lists what the route answers the caller; the person
 * and the key differ only where a route is for a person (403) or a bearer (401) alone.
 */
const OK = [200] as const;
const MISSING = [404] as const;
/** A route for a signed-in person: an API key is refused (docs/api.md, "Credentials"). */
const PERSON = [200, 403] as const;
/** API-key management takes a bearer token only. */
const BEARER = [200, 401] as const;

const list = (url: string): Probe => ({ url, status: OK });
const gone = (url: string): Probe => ({ url, status: MISSING });

const allActions = (w: World) => [
  ...w.publicActions,
  ...w.privateActions,
  ...w.madePrivate.actions,
];
const objectsOf = (w: World) => [w.publicObject, ...w.privateObjects, w.madePrivate.object];

export const MEMBER_SURFACES: Surface[] = [
  { route: '/api-keys', probes: () => [{ url: '/api-keys', status: BEARER }] },
  {
    route: '/batches/:batchId/private-actions/:actionId',
    probes: (w) => allActions(w).map((a) => gone(`/batches/${a.batch_id}/private-actions/${a.id}`)),
  },
  {
    route: '/ebus/action-logs',
    probes: (w) => [
      list('/ebus/action-logs?limit=100'),
      ...w.privateObjects.map((id) => list(`/ebus/action-logs?object_id=${id}`)),
      list(`/ebus/action-logs?wallet=${w.hidden.address}`),
    ],
  },
  {
    route: '/ebus/nonce',
    probes: (w) => [
      list('/ebus/nonce'),
      gone(`/ebus/nonce?address=${w.hidden.address}`),
      gone(`/ebus/nonce?signer=${w.hidden.address}`),
    ],
  },
  {
    route: '/indexer/objects/:id/history',
    probes: (w) => objectsOf(w).map((id) => gone(`/indexer/objects/${id}/history`)),
  },
  {
    route: '/indexer/query',
    probes: (w) => [
      list(`/indexer/query?template_id=${w.privateTemplate}`),
      list(`/indexer/query?owner=${w.recipient}`),
      list(`/indexer/query?custom.ssn=${encodeURIComponent(`${MARK}-custom-update`)}`),
    ],
  },
  {
    route: '/indexer/search',
    probes: () => [
      list(`/indexer/search?q=${encodeURIComponent(MARK)}`),
      list(`/indexer/search?q=${encodeURIComponent(`${MARK}-meta-name`)}`),
    ],
  },
  {
    route: '/objects',
    probes: (w) => [
      list('/objects?limit=100'),
      ...w.privateObjects.map((id) => list(`/objects?id=${id}`)),
      list(`/objects?template_id=${w.privateTemplate}`),
      list(`/objects?owner=${w.recipient}`),
    ],
  },
  {
    route: '/objects/:id',
    probes: (w) => objectsOf(w).map((id) => gone(`/objects/${id}`)),
  },
  { route: '/organizations', probes: () => [list('/organizations')] },
  { route: '/organizations/:organizationId', probes: (w) => [gone(`/organizations/${w.orgId}`)] },
  {
    route: '/organizations/:organizationId/balance',
    probes: (w) => [gone(`/organizations/${w.orgId}/balance`)],
  },
  {
    route: '/organizations/:organizationId/balance/history',
    probes: (w) => [gone(`/organizations/${w.orgId}/balance/history`)],
  },
  {
    route: '/organizations/:organizationId/members',
    probes: (w) => [gone(`/organizations/${w.orgId}/members`)],
  },
  { route: '/payments/deposits', probes: () => [list('/payments/deposits')] },
  { route: '/policies', probes: () => [list('/policies')] },
  { route: '/policies/:id', probes: (w) => [gone(`/policies/${w.records.policy}`)] },
  { route: '/support', probes: () => [list('/support')] },
  { route: '/support/:messageId', probes: (w) => [gone(`/support/${w.records.message}`)] },
  {
    route: '/templates',
    probes: (w) => [
      list('/templates?limit=100'),
      list(`/templates?id=${w.privateTemplate}`),
      list('/templates?is_public=false'),
      list(`/templates?autocomplete=${encodeURIComponent(MARK)}`),
    ],
  },
  {
    route: '/templates/:id',
    probes: (w) => [
      gone(`/templates/${w.privateTemplate}`),
      gone(`/templates/${w.publicTemplate}`),
    ],
  },
  {
    route: '/templates/:id/versions',
    probes: (w) => [gone(`/templates/${w.privateTemplate}/versions`)],
  },
  { route: '/wallets/me', probes: () => [{ url: '/wallets/me', status: PERSON }] },
  {
    route: '/wallets/me/credentials',
    probes: () => [{ url: '/wallets/me/credentials', status: PERSON }],
  },
  {
    route: '/wallets/me/credentials/passkey/options',
    probes: () => [{ url: '/wallets/me/credentials/passkey/options', status: PERSON }],
  },
  { route: '/wallets/sessions', probes: () => [{ url: '/wallets/sessions', status: PERSON }] },
  { route: '/webhooks', probes: () => [list('/webhooks')] },
  { route: '/webhooks/:webhookId', probes: (w) => [gone(`/webhooks/${w.records.webhook}`)] },
  {
    route: '/webhooks/:webhookId/events',
    probes: (w) => [gone(`/webhooks/${w.records.webhook}/events`)],
  },
  {
    route: '/webhooks/events',
    probes: (w) => [
      list('/webhooks/events'),
      list(`/webhooks/events?webhook_id=${w.records.webhook}`),
    ],
  },
];
