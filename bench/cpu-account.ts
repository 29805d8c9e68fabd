/**
 * CPU time by process group, read from /proc (Linux): the service, every PostgreSQL process
 * on the machine, and this process. Used by the benchmarks to print where a phase's CPU went
 * per operation, which a single throughput figure hides on a 2-core machine.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';

const TICK_US = 1_000_000 / 100; // USER_HZ is 100 on Linux

/** Parent pid and utime + stime in µs of one process, or null when it is gone. */
function statOf(pid: string): { ppid: number; cpu: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), cpu: (Number(fields[11]) + Number(fields[12])) * TICK_US };
  } catch {
    return null;
  }
}

/** CPU of one process (all its threads) in µs; 0 once it is gone. */
export function processCpuUs(pid: number): number {
  return statOf(String(pid))?.cpu ?? 0;
}

/** CPU of a process and its children (the service's HTTP processes when WORKERS > 1). */
function treeCpuUs(pid: number): number {
  let total = statOf(String(pid))?.cpu ?? 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const s = statOf(entry);
    if (s && s.ppid === pid) total += s.cpu;
  }
  return total;
}

/**
 * The PostgreSQL server's main process (the parent of the backend serving `backendPid`): its
 * process tree is that server alone, which the machine-wide sum (other servers, such as the
 * test suites' embedded ones) is not.
 */
export function postmasterOf(backendPid: number): number {
  const s = statOf(String(backendPid));
  if (!s) throw new Error(`no process ${backendPid}: is PostgreSQL on this machine?`);
  return s.ppid;
}

/** Summed CPU of every process whose command name starts with `postgres`. */
function postgresCpuUs(): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const comm = readFileSync(`/proc/${entry}/comm`, 'utf8');
      if (comm.startsWith('postgres')) total += statOf(entry)?.cpu ?? 0;
    } catch {
      /* exited */
    }
  }
  return total;
}

/** Idle time of every core of the machine in µs (/proc/stat: idle + iowait), summed. */
function machineIdleUs(): number {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/);
  return (Number(cpu[4]) + Number(cpu[5])) * TICK_US;
}

export interface CpuSample {
  /** The whole machine's idle core time. */
  idle: number;
  service: number;
  /** The service's main thread alone (its event loop): the bottleneck when it nears 100 %. */
  main: number;
  postgres: number;
  self: number;
  wall: number;
}

/** `postmaster`: count that server's processes only (postmasterOf), else every `postgres*`. */
export function sampleCpu(servicePid: number | undefined, postmaster?: number): CpuSample {
  const self = process.cpuUsage();
  return {
    idle: machineIdleUs(),
    service: servicePid === undefined ? 0 : treeCpuUs(servicePid),
    main: servicePid === undefined ? 0 : (statOf(`${servicePid}/task/${servicePid}`)?.cpu ?? 0),
    postgres: postmaster === undefined ? postgresCpuUs() : treeCpuUs(postmaster),
    self: self.user + self.system,
    wall: performance.now() * 1000,
  };
}

/** The share of the wall time between two samples that the service's main thread was busy. */
export function mainBusy(from: CpuSample, to: CpuSample): number {
  return (to.main - from.main) / Math.max(1, to.wall - from.wall);
}

/** The share of the machine's core time between two samples that no process used. */
export function machineIdle(from: CpuSample, to: CpuSample): number {
  return (to.idle - from.idle) / Math.max(1, (to.wall - from.wall) * cpus().length);
}

/** "service 310 µs, postgres 240 µs, load generator 60 µs per action; 1.7 cores busy". */
export function describeCpu(from: CpuSample, to: CpuSample, operations: number, what: string) {
  const per = (us: number) => Math.round(us / Math.max(1, operations));
  const service = to.service - from.service;
  const postgres = to.postgres - from.postgres;
  const self = to.self - from.self;
  const cores = (service + postgres + self) / (to.wall - from.wall);
  return `CPU per ${what}: service ${per(service)} µs, postgres ${per(postgres)} µs, load generator ${per(self)} µs (${cores.toFixed(2)} cores busy)`;
}
