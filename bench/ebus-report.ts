/** Reading bench/ebus.ts's printed report back into figures (for bench/compare.ts). */

/** One phase's figures from one run of bench/ebus.ts. */
export interface PhaseFigures {
  perSecond: number;
  p50: number;
  p99: number;
  serviceUs: number;
  postgresUs: number;
}

export type RunFigures = Map<string, PhaseFigures>;

const num = (s: string | undefined): number => Number((s ?? 'NaN').replace(/,/g, ''));

/**
 * Reads the figures out of bench/ebus.ts's report: each "(x) …: N actions/s …" block, with
 * its "CPU per action: service N µs, postgres M µs" line. Phase (c)'s group-commit ceiling is
 * reported as "c" (no latency; the committer runs in the benchmark's own process, counted as
 * service).
 */
export function parseReport(text: string): RunFigures {
  const out: RunFigures = new Map();
  const blocks = text.split(/^(?=\([a-z]\) )/m).filter((b) => /^\([a-z]\) /.test(b));
  for (const block of blocks) {
    const phase = block[1]!;
    const cpu = /CPU per action: service ([\d,]+) µs, postgres ([\d,]+) µs/.exec(block);
    if (phase === 'c') {
      const c = /group-commit SQL alone[^:]*: ([\d,]+) actions\/s/.exec(block);
      const committer = /committer \(node\) ([\d,]+) µs/.exec(block);
      const postgres = /postgres ([\d,]+) µs/.exec(block);
      if (c && num(c[1]) > 0) {
        out.set('c', {
          perSecond: num(c[1]),
          p50: NaN,
          p99: NaN,
          serviceUs: num(committer?.[1]),
          postgresUs: num(postgres?.[1]),
        });
      }
      continue;
    }
    const head = /: ([\d,]+) actions\/s.*?p50 ([\d.]+) ms.*?p99 ([\d.]+) ms/.exec(block);
    if (!head || num(head[1]) === 0) continue;
    out.set(phase, {
      perSecond: num(head[1]),
      p50: num(head[2]),
      p99: num(head[3]),
      serviceUs: num(cpu?.[1]),
      postgresUs: num(cpu?.[2]),
    });
  }
  return out;
}
