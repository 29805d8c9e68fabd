import type { Readable } from 'node:stream';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';

/** A port free on loopback now (a service's config must name it before it listens). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether a Redis answers PING at host:port within a second (no client library needed). */
export async function redisAnswers(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port || 6379), hostname || '127.0.0.1');
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d: Buffer) => done(d.toString('latin1').startsWith('+PONG')));
  });
}

/** Whether this machine has a `redis-server` binary (.ci/run installs Debian's). */
export const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;

/**
 * A `redis-server` of the test's own on `port` (nothing kept on disk), which the test can stop
 * and start again on the same port.
 */
export class TestRedis {
  readonly url: string;
  private child: ChildProcess | null = null;

  constructor(port: number) {
    this.url = `redis://127.0.0.1:${port}`;
  }

  async start(): Promise<void> {
    const port = new URL(this.url).port;
    const child = spawn(
      'redis-server',
      ['--port', port, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    this.child = child;
    const until = Date.now() + 10_000;
    while (!(await redisAnswers(this.url))) {
      if (Date.now() > until || child.exitCode !== null) {
        throw new Error('redis-server did not start');
      }
      await sleep(50);
    }
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }
}

/**
 * The arguments for `node` that run one of the built entry points (`main.js`, `worker.js`,
 * `cli/ons.js` in dist/, made by test/build-setup.ts before the tests), as `npm start` does:
 * plain node, no TypeScript loader, stack traces mapped to the .ts lines.
 */
export function builtEntry(file: string): string[] {
  return ['--enable-source-maps', path.resolve('dist', file)];
}

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  /** Every JSON log line so far. */
  lines: Record<string, unknown>[];
  stop(): Promise<void>;
}

/** The JSON log lines a process writes to `stream`, parsed as they arrive (others skipped). */
export function jsonLinesOf(stream: Readable): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  let buf = '';
  stream.on('data', (chunk: Buffer) => {
    buf += chunk.toString('utf8');
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        /* not a log line */
      }
    }
  });
  return lines;
}

/**
 * The built service (dist/main.js) in a process of its own on 127.0.0.1, on an existing
 * database, ready when `/readyz` answers 200. Stopped with SIGTERM (SIGKILL after 10 s) by
 * its pid.
 */
export async function startServiceProcess(env: Record<string, string>): Promise<ServiceProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, builtEntry('main.js'), {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines = jsonLinesOf(child.stdout);
  child.stderr.resume();
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  const url = `http://127.0.0.1:${port}`;
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) return { url, child, lines, stop };
    } catch {
      /* not listening yet */
    }
    if (child.exitCode !== null) throw new Error(`service exited early with ${child.exitCode}`);
    await sleep(200);
  }
  await stop();
  throw new Error('service did not become ready');
}

/**
 * The built service (dist/main.js) run by node itself (so a SIGKILL reaches the service) on the
 * database of `base`, a test service that made the fixtures (tokens and signed texts match its
 * PUBLIC_URL and NETWORK_ID); ready when `/readyz` answers 200. `entry` 'worker.js' is
 * `npm run worker`.
 */
export async function spawnService(
  base: { config: { databaseUrl: string | null; publicUrl: string; networkId: string } },
  env: Record<string, string> = {},
  port?: number,
  entry: 'main.js' | 'worker.js' = 'main.js',
): Promise<{ url: string; port: number; child: ChildProcess }> {
  const p = port ?? (await freePort());
  const child = spawn(process.execPath, builtEntry(entry), {
    env: {
      ...process.env,
      DATABASE_URL: base.config.databaseUrl!,
      PORT: String(p),
      HOST: '127.0.0.1',
      PUBLIC_URL: base.config.publicUrl,
      NETWORK_ID: base.config.networkId,
      RATE_LIMIT_ENABLED: 'false',
      LOG_LEVEL: 'warn',
      EBUS_RECOVERY_THREAD: 'false',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${p}`;
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) return { url, port: p, child };
    } catch {
      /* not listening yet */
    }
    if (child.exitCode !== null) throw new Error(`service exited early with ${child.exitCode}`);
    await sleep(200);
  }
  child.kill('SIGKILL');
  throw new Error('service did not become ready');
}
