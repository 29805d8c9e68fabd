import type { BenchOrg, BenchWallet } from './ebus-load.js';

/** One connection's requests: each body with the session token of the wallet that signed it. */
export interface SharedLane {
  w: BenchWallet;
  bodies: string[];
  /** `tokens[i]` authorises `bodies[i]`; absent when every body is `w`'s. */
  tokens?: string[];
}

/**
 * Phase (e): the wallets of many organizations spread over fewer connections. Each connection
 * takes its share of the wallets and sends their actions interleaved (one of each wallet in
 * turn), so every wallet's nonces still arrive in order while the organizations' groups mix.
 */
export function sharedLanes(
  orgs: readonly BenchOrg[],
  connections: number,
  sign: (w: BenchWallet, templateId: string) => string[],
): SharedLane[] {
  const wallets = orgs.flatMap((o) => o.wallets.map((w) => ({ w, bodies: sign(w, o.templateId) })));
  const lanes: SharedLane[] = [];
  for (let c = 0; c < connections; c++) {
    const mine = wallets.filter((_, i) => i % connections === c);
    if (mine.length === 0) continue;
    const lane: SharedLane = { w: mine[0]!.w, bodies: [], tokens: [] };
    const longest = Math.max(...mine.map((m) => m.bodies.length));
    for (let n = 0; n < longest; n++) {
      for (const m of mine) {
        const body = m.bodies[n];
        if (body === undefined) continue;
        lane.bodies.push(body);
        lane.tokens!.push(m.w.token);
      }
    }
    lanes.push(lane);
  }
  return lanes;
}

/** The first `perWallet` actions of each wallet of a lane (the warm-up), taken off the lane. */
export function takeWarmUp(
  lane: SharedLane,
  perWallet: number,
  walletsPerLane: number,
): SharedLane {
  const n = perWallet * walletsPerLane;
  return { w: lane.w, bodies: lane.bodies.splice(0, n), tokens: lane.tokens?.splice(0, n) };
}
