import type { HarnessService } from '../helpers/harness.js';
import type { Probe } from './surfaces.js';
import type { Needle, World } from './world.js';

/** A list's `next` cursor, opaque but decodable: what it carries is shown too. */
function cursorOf(body: string): string {
  const next = /"next":"([A-Za-z0-9_-]+)"/.exec(body)?.[1];
  return next ? Buffer.from(next, 'base64url').toString('utf8') : '';
}

const isHash = (v: string) => /^0x[0-9a-f]+$/i.test(v) && v.length >= 42;

/**
 * The needles an answer to `url` holds but may not: a value the URL itself carries may come
 * back (an echo is no leak), `mayShow` is taken out first, and the batch explorer shows a
 * private object's id and its actions' ids (docs/batches.md, "What is public"). The body is
 * read as text (with its list cursor decoded) and, for binary answers such as log tiles, as
 * hex; the headers as text. Case is ignored, so a checksummed address is found too.
 */
export function leaksIn(
  w: World,
  url: string,
  probe: Pick<Probe, 'mayShow'>,
  res: { body: string; rawPayload: Buffer; headers: Record<string, unknown> },
): string[] {
  let text = [
    res.body,
    cursorOf(res.body),
    ...Object.entries(res.headers).map(([k, v]) => `${k}: ${String(v)}`),
  ]
    .join('\n')
    .toLowerCase();
  for (const shown of probe.mayShow ?? []) text = text.split(shown.toLowerCase()).join('');
  const raw = res.rawPayload.toString('hex');
  const asked = decodeURIComponent(url).toLowerCase();
  const explorer = url.startsWith('/batches/') || url === '/batches' || url.startsWith('/batches?');
  const allowed = (n: Needle) =>
    asked.includes(n.value.toLowerCase()) || (explorer && n.explorer === true);
  return w.needles
    .filter((n) => !allowed(n))
    .filter((n) => {
      const v = n.value.toLowerCase();
      return text.includes(v) || (isHash(v) && raw.includes(v.slice(2)));
    })
    .map((n) => {
      const at = text.indexOf(n.value.toLowerCase());
      const context = at >= 0 ? text.slice(Math.max(0, at - 60), at + 60) : '(binary)';
      return `GET ${url} → ${n.label} ${n.value}: …${context}…`;
    });
}

/**
 * Calls each probe (GET, and HEAD for its headers) with `headers`, then the links its answer
 * names, one level; answers the leaks found and the answers that were not as the row says.
 */
export async function checkProbes(
  svc: HarnessService,
  w: World,
  headers: Record<string, string>,
  probes: readonly Probe[],
): Promise<{ leaks: string[]; wrong: string[] }> {
  const leaks: string[] = [];
  const wrong: string[] = [];
  const seen = new Set<string>();
  const fetch = async (url: string) => {
    seen.add(url);
    return svc.app.inject({ method: 'GET', url, headers });
  };
  for (const probe of probes) {
    const res = await fetch(probe.url);
    if (!probe.status.includes(res.statusCode)) {
      wrong.push(`GET ${probe.url} → ${res.statusCode} ${res.body.slice(0, 200)}`);
    }
    leaks.push(...leaksIn(w, probe.url, probe, res));
    for (const shown of probe.shows ?? []) {
      if (!res.body.includes(shown)) wrong.push(`GET ${probe.url} does not show ${shown}`);
    }
    // HEAD answers the headers alone, by a route of its own where one is declared.
    const head = await svc.app.inject({ method: 'HEAD', url: probe.url, headers });
    leaks.push(...leaksIn(w, `${probe.url} (HEAD)`, probe, head));
    if (res.statusCode !== 200 || !probe.follow) continue;
    for (const url of probe.follow(res.body)) {
      if (seen.has(url)) continue;
      const linked = await fetch(url);
      if (linked.statusCode !== 200) {
        wrong.push(`GET ${url} (from ${probe.url}) → ${linked.statusCode} ${linked.body}`);
      }
      leaks.push(...leaksIn(w, url, {}, linked));
    }
  }
  return { leaks, wrong };
}
