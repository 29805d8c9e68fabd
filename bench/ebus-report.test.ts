import { describe, expect, it } from 'vitest';
import { parseReport } from './ebus-report.js';

// The shape bench/ebus.ts prints (its console.log templates), with made-up figures.
const REPORT = `pre-signed 129600 actions in 9.8 s (untimed)
machine: 2 cores, load average before the phases 1.20, after 1.90; synchronous_commit=on
(a) one org, POST /ebus/execute, 50 connections: 2,564 actions/s (20512 ok, 0 refused, 8.0 s), p50 18.2 ms, p90 24.0 ms, p99 41.5 ms, max 80 ms
    in the service 12.1 ms per request, event loop 71 % busy; mean group 18.2, queue wait 6.1 ms, group apply 8.0 ms
    CPU per action: service 345 µs, postgres 210 µs, load generator 60 µs (1.60 cores busy)
(b) ten orgs, POST /ebus/execute, 50 connections: 0 actions/s (0 ok, 0 refused, 0.0 s), p50 0.0 ms, p90 0.0 ms, p99 0.0 ms, max 0 ms
    in the service 0.0 ms per request, event loop 0 % busy; mean group 0.0, queue wait 0.0 ms, group apply 0.0 ms
    
(c) signature recovery alone (1 core): 9,100/s; group-commit SQL alone (one org, 50 submitters): 6,020 actions/s, mean group 44.0
    group-commit CPU per action: postgres 120 µs, committer (node) 1,150 µs (1.30 cores busy)
(d) ten orgs, POST /ebus/actions/batch (20 actions of one wallet per request), 50 connections: 4,100 actions/s (32800 ok, 0 refused, 8.0 s), p50 200.5 ms, p99 410.0 ms per request
    in the service 190.0 ms per request, event loop 80 % busy; mean group 60.0, queue wait 1.0 ms, group apply 20.0 ms
    CPU per action: service 150 µs, postgres 90 µs, load generator 10 µs (1.50 cores busy)
ratios: (a)/recovery 0.28, (a)/group-commit 0.43, (b)/(a) 0.00
`;

describe('parseReport', () => {
  const figures = parseReport(REPORT);

  it('reads each measured HTTP phase with its latency and CPU per action', () => {
    expect(figures.get('a')).toEqual({
      perSecond: 2564,
      p50: 18.2,
      p99: 41.5,
      serviceUs: 345,
      postgresUs: 210,
    });
    expect(figures.get('d')).toMatchObject({
      perSecond: 4100,
      p50: 200.5,
      p99: 410,
      serviceUs: 150,
    });
  });

  it('leaves out a phase that did not run (0 actions/s)', () => {
    expect(figures.has('b')).toBe(false);
  });

  it('reads the group-commit ceiling of phase (c), the committer counted as service', () => {
    const c = figures.get('c')!;
    expect(c.perSecond).toBe(6020);
    expect(c.serviceUs).toBe(1150);
    expect(c.postgresUs).toBe(120);
    expect(Number.isNaN(c.p50)).toBe(true);
  });

  it('leaves out phase (c) when it did not run', () => {
    const notRun = REPORT.replace('6,020 actions/s', '0 actions/s');
    expect(parseReport(notRun).has('c')).toBe(false);
  });

  it('answers an empty map for a report with no phases', () => {
    expect(parseReport('service did not start').size).toBe(0);
  });
});
