import { MARK, PUBLIC_MARK, type World } from './world.js';

/**
 * Every GET route answered without a credential, with the URLs that exercise it: its path
 * filled with the organization's real ids, the private ones included, and the status each
 * must answer. `follow` names the links of an answer to read one level further (the next
 * page, each batch's content and proofs, each log tile, each object's history, each action's
 * receipt). `shows` is what a public answer must hold (so a route that answers nothing
 * passes no row by accident); `mayShow` what it may hold although private (the invitation
 * to the holder of its link).
 */
export interface Probe {
  url: string;
  status: readonly number[];
  shows?: readonly string[];
  mayShow?: readonly string[];
  follow?: (body: string) => string[];
}

export interface Surface {
  /** The route as the service registers it (`svc.routeTable()`), or `v2` for the v2 paths. */
  route: string;
  probes: (w: World) => Probe[];
}

const OK = [200] as const;
const MISSING = [404] as const;
/** The console and the reference pages exist only where they were built. */
const BUILT = [200, 301, 302, 404, 503] as const;

const json = <T>(body: string): T => JSON.parse(body) as T;

/** The same list URL with its next page's cursor. */
const nextPage = (url: string, body: string): string[] => {
  const next = json<{ next?: string }>(body).next;
  if (!next) return [];
  const u = new URL(url, 'http://x');
  u.searchParams.set('next', next);
  return [`${u.pathname}${u.search}`];
};

interface BatchItem {
  id: string;
  hash: string;
  affected_actions: { id: string }[];
}

/** A batch's record, its content (once sealed) and each listed action's inclusion proof. */
const batchLinks = (b: BatchItem): string[] =>
  b.hash === ''
    ? [`/batches/${b.id}`]
    : [
        `/batches/${b.id}`,
        `/batches/${b.id}/content`,
        ...b.affected_actions.map((a) => `/batches/${b.id}/proofs/${a.id}`),
      ];

/** A tile index as C2SP tlog-tiles writes it: 3-digit groups, all but the last `x`-prefixed. */
export function tileIndex(n: number): string {
  const groups: string[] = [];
  do {
    groups.unshift(String(n % 1000).padStart(3, '0'));
    n = Math.floor(n / 1000);
  } while (n > 0);
  return groups.map((g, i) => (i < groups.length - 1 ? `x${g}` : g)).join('/');
}

/** Every tile and entry bundle of a tree of `size` leaves, partial ones at the edge. */
export function tilesOf(size: number): string[] {
  const out: string[] = [];
  for (let level = 0, width = size; width > 0; level++, width = Math.floor(width / 256)) {
    const full = Math.floor(width / 256);
    const kinds = level === 0 ? [`${level}`, 'entries'] : [`${level}`];
    for (const kind of kinds) {
      for (let i = 0; i < full; i++) out.push(`/log/tile/${kind}/${tileIndex(i)}`);
      if (width % 256) out.push(`/log/tile/${kind}/${tileIndex(full)}.p/${width % 256}`);
    }
  }
  return out;
}

const treeSize = (checkpoint: string) => Number(checkpoint.split('\n')[1]);

const allActions = (w: World) => [
  ...w.publicActions,
  ...w.privateActions,
  ...w.madePrivate.actions,
];
const batchIds = (w: World) => [...new Set(allActions(w).map((a) => a.batch_id))];
const pendingActions = (w: World) => [w.pending.publicAction, w.pending.privateAction];

export const SURFACES: Surface[] = [
  { route: '/metrics', probes: () => [{ url: '/metrics', status: OK }] },
  { route: '/openapi.json', probes: () => [{ url: '/openapi.json', status: OK }] },
  { route: '/docs/', probes: () => [{ url: '/docs/', status: BUILT }] },
  {
    route: '/docs/static/index.html',
    probes: () => [{ url: '/docs/static/index.html', status: BUILT }],
  },
  {
    route: '/docs/static/swagger-initializer.js',
    probes: () => [{ url: '/docs/static/swagger-initializer.js', status: BUILT }],
  },
  { route: '/docs/json', probes: () => [{ url: '/docs/json', status: OK }] },
  { route: '/docs/yaml', probes: () => [{ url: '/docs/yaml', status: OK }] },
  {
    route: '/docs/static/*',
    probes: () => [{ url: '/docs/static/swagger-ui.css', status: BUILT }],
  },
  { route: '/console', probes: () => [{ url: '/console', status: BUILT }] },
  {
    route: '/console/*',
    probes: (w) => [
      { url: '/console/', status: BUILT },
      { url: '/console/explorer', status: BUILT },
      { url: `/console/objects/${w.privateObjects[0]}`, status: BUILT },
    ],
  },
  { route: '/healthz', probes: () => [{ url: '/healthz', status: OK }] },
  { route: '/readyz', probes: () => [{ url: '/readyz', status: OK }] },
  {
    route: '/.well-known/jwks.json',
    probes: () => [{ url: '/.well-known/jwks.json', status: OK }],
  },
  {
    route: '/public/credentials/:credentialId',
    probes: (w) => [
      {
        url: `/public/credentials/${w.passkeyPublic.authenticator.credentialId}`,
        status: OK,
        shows: [w.passkeyPublic.address],
      },
      {
        url: `/public/credentials/${w.passkeyPrivate.authenticator.credentialId}`,
        status: MISSING,
      },
    ],
  },
  {
    route: '/public/wallets/:address/signers/:signer',
    probes: (w) => [
      { url: `/public/wallets/${w.owner.address}/signers/${w.owner.address}`, status: OK },
      { url: `/public/wallets/${w.hidden.address}/signers/${w.hidden.address}`, status: MISSING },
    ],
  },
  {
    route: '/wallets/connect/organizations/:organizationId',
    probes: (w) => [{ url: `/wallets/connect/organizations/${w.orgId}`, status: MISSING }],
  },
  {
    route: '/wallets/connect/passkey/register/options',
    probes: () => [{ url: '/wallets/connect/passkey/register/options', status: OK }],
  },
  {
    route: '/wallets/connect/passkey/login/options',
    probes: () => [{ url: '/wallets/connect/passkey/login/options', status: OK }],
  },
  {
    route: '/wallets/connect/eoa/challenge',
    probes: (w) => [
      { url: `/wallets/connect/eoa/challenge?address=${w.hidden.address}`, status: OK },
      { url: `/wallets/connect/eoa/challenge?address=${w.recipient}`, status: OK },
    ],
  },
  {
    // A GET that accepts the invitation: only a wrong token is sent here.
    route: '/organizations/:organizationId/invite',
    probes: (w) => [
      {
        url: `/organizations/${w.orgId}/invite?token=wrong-token&member_id=${w.invitation.id}`,
        status: MISSING,
      },
    ],
  },
  {
    route: '/organizations/:organizationId/invitation',
    probes: (w) => [
      {
        url: `/organizations/${w.orgId}/invitation?token=wrong-token&member_id=${w.invitation.id}`,
        status: MISSING,
      },
      {
        url: `/organizations/${w.orgId}/invitation?member_id=${w.keeper.memberId}&token=${encodeURIComponent(w.invitation.token)}`,
        status: MISSING,
      },
      // The link's holder is shown the invitation (docs/members.md), and nothing else.
      {
        url: `/organizations/${w.orgId}/invitation?token=${encodeURIComponent(w.invitation.token)}&member_id=${w.invitation.id}`,
        status: OK,
        mayShow: [w.invitation.email, w.invitation.id],
      },
    ],
  },
  {
    route: '/public/templates/:id',
    probes: (w) => [
      { url: `/public/templates/${w.publicTemplate}`, status: OK, shows: [PUBLIC_MARK] },
      { url: `/public/templates/${w.privateTemplate}`, status: MISSING },
      { url: `/public/templates/${w.madePrivate.template}`, status: MISSING },
    ],
  },
  {
    route: '/public/templates/:id/versions/:version',
    probes: (w) => [
      { url: `/public/templates/${w.publicTemplate}/versions/1`, status: OK, shows: [PUBLIC_MARK] },
      { url: `/public/templates/${w.privateTemplate}/versions/1`, status: MISSING },
      { url: `/public/templates/${w.madePrivate.template}/versions/1`, status: MISSING },
    ],
  },
  {
    route: '/public/objects',
    probes: (w) => {
      const list = (q: string, shows: string[] = []): Probe => {
        const url = `/public/objects${q}`;
        return {
          url,
          status: OK,
          shows,
          follow: (body) => [
            ...nextPage(url, body),
            ...json<{ objects: { id: string }[] }>(body).objects.map(
              (o) => `/public/objects/${o.id}/history`,
            ),
            ...json<{ faces: { template_id: string }[] }>(body).faces.map(
              (f) => `/public/templates/${f.template_id}`,
            ),
          ],
        };
      };
      return [
        list('', [w.publicObject]),
        list('?limit=1&order=asc'),
        list('?limit=100&include_faces=true&include_actions=true&include_dropped=true', [
          PUBLIC_MARK,
        ]),
        list('?sortBy=when_modified&limit=100'),
        ...[...w.privateObjects, w.madePrivate.object].map((id) => list(`?id=${id}`)),
        list(`?owner=${w.madePrivate.owner}`),
        list(`?owner=${w.recipient}`),
        list(`?owner=${w.keeper.address}`),
        list(`?owner=${w.hidden.address}`),
        list(`?collection_id=${encodeURIComponent(`${MARK}-collection`)}`),
        list(`?autocomplete=${encodeURIComponent(MARK)}`),
        list(`?geo_hash=${w.privateGeoHash}`),
        list(`?geo_hash=${w.privateGeoHash.slice(0, 3)}&include_faces=true`),
      ];
    },
  },
  {
    route: '/public/objects/:id/history',
    probes: (w) => [
      {
        url: `/public/objects/${w.publicObject}/history`,
        status: OK,
        shows: [PUBLIC_MARK],
        follow: (body) =>
          json<{ action_logs: { id: string; batch_id: string }[] }>(body).action_logs.flatMap(
            (a) => [`/ebus/action-logs/${a.id}/receipt`, `/batches/${a.batch_id}/proofs/${a.id}`],
          ),
      },
      { url: `/public/objects/${w.publicObject}/history?limit=1`, status: OK },
      ...[...w.privateObjects, w.madePrivate.object].map((id) => ({
        url: `/public/objects/${id}/history`,
        status: MISSING,
      })),
    ],
  },
  { route: '/public/network', probes: () => [{ url: '/public/network', status: OK }] },
  { route: '/public/network/fees', probes: () => [{ url: '/public/network/fees', status: OK }] },
  {
    route: '/batches',
    probes: () =>
      ['', '?limit=100', '?limit=1', '?status=proven&limit=100', '?order=asc'].map((q) => ({
        url: `/batches${q}`,
        status: OK,
        shows: q === '?limit=1' ? [] : ['"mint"'],
        follow: (body: string) => [
          ...nextPage(`/batches${q}`, body),
          ...json<{ batches: BatchItem[] }>(body).batches.flatMap(batchLinks),
        ],
      })),
  },
  {
    route: '/batches/:batchId',
    probes: (w) =>
      [...batchIds(w), w.pending.batchId].map((id) => ({
        url: `/batches/${id}`,
        status: OK,
        follow: (body: string) => batchLinks(json<BatchItem>(body)),
      })),
  },
  {
    route: '/batches/:batchId/content',
    probes: (w) => [
      ...batchIds(w).map((id) => ({ url: `/batches/${id}/content`, status: OK })),
      // A batch still building has no content yet (docs/batches.md).
      { url: `/batches/${w.pending.batchId}/content`, status: MISSING },
    ],
  },
  {
    route: '/batches/:batchId/proofs/:actionId',
    probes: (w) => [
      ...allActions(w).map((a) => ({ url: `/batches/${a.batch_id}/proofs/${a.id}`, status: OK })),
      ...pendingActions(w).map((a) => ({
        url: `/batches/${w.pending.batchId}/proofs/${a.id}`,
        status: [400, 404],
      })),
    ],
  },
  {
    route: '/log/checkpoint',
    probes: () => [
      {
        url: '/log/checkpoint',
        status: OK,
        follow: (body) => [
          ...tilesOf(treeSize(body)),
          `/log/proof/consistency?from=1&to=${treeSize(body)}`,
        ],
      },
    ],
  },
  {
    route: '/log/tile/*',
    probes: (w) => tilesOf(allActions(w).length).map((url) => ({ url, status: OK })),
  },
  {
    route: '/log/proof/inclusion',
    probes: (w) => {
      const size = allActions(w).length;
      const at = (hash: string) => `/log/proof/inclusion?hash=${hash}&size=${size}`;
      return [
        ...w.publicActions.map((a) => ({ url: at(a.hash), status: OK })),
        // Sealed public, then made private: its hash stays a leaf (docs/log.md).
        ...w.madePrivate.actions.map((a) => ({ url: at(a.hash), status: OK })),
        // A private action's hash is not in the log (docs/log.md, "The tree"); its leaf is.
        ...w.privateActions.map((a) => ({ url: at(a.hash), status: MISSING })),
        ...w.privateLeaves.map((leaf) => ({ url: at(leaf), status: OK })),
      ];
    },
  },
  {
    route: '/log/proof/consistency',
    probes: (w) => [
      { url: `/log/proof/consistency?from=1&to=${allActions(w).length}`, status: OK },
    ],
  },
  {
    route: '/ebus/action-logs/:id/receipt',
    probes: (w) => [
      ...w.publicActions.map((a) => ({
        url: `/ebus/action-logs/${a.id}/receipt`,
        status: OK,
        shows: [a.hash],
      })),
      ...[...w.privateActions, ...w.madePrivate.actions, w.pending.privateAction].map((a) => ({
        url: `/ebus/action-logs/${a.id}/receipt`,
        status: MISSING,
      })),
      // Not in the log yet: retry later (docs/log.md, "Receipts").
      { url: `/ebus/action-logs/${w.pending.publicAction.id}/receipt`, status: [400] },
    ],
  },
  {
    route: '/storage/files/:id',
    probes: (w) => [
      { url: `/storage/files/${w.publicFile}`, status: OK, shows: [PUBLIC_MARK] },
      { url: `/storage/files/${w.privateFile}`, status: MISSING },
    ],
  },
  {
    // Not in the route table (docs/api.md, "v2 paths"): redirects that echo their path.
    route: 'v2',
    probes: (w) => [
      { url: `/vatoms/${w.privateObjects[0]}`, status: [301, 410] },
      { url: `/vatoms?template_id=${w.privateTemplate}`, status: [301, 410] },
      { url: '/user/profile', status: [301, 410] },
    ],
  },
];
