import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { builtEntry, jsonLinesOf } from '../helpers/processes.js';
import { startTestService } from '../helpers/service.js';

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** Pids of PostgreSQL processes whose command line names this data directory. */
async function postgresPidsFor(dir: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmd = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmd.includes('postgres') && cmd.includes(dir)) pids.push(Number(entry));
  }
  return pids;
}

interface Started {
  child: ChildProcess;
  lines: Record<string, unknown>[];
  exited: Promise<number | null>;
}

async function startMain(
  dataDir: string,
  port: number,
  extraEnv: Record<string, string> = {},
): Promise<Started> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    ...extraEnv,
  };
  delete env.DATABASE_URL;
  const child = spawn(process.execPath, builtEntry('main.js'), {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines = jsonLinesOf(child.stdout);
  child.stderr.resume();
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`);
      if (res.status === 200) return { child, lines, exited };
    } catch {
      /* not listening yet */
    }
    if (child.exitCode !== null) throw new Error(`service exited early with ${child.exitCode}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill('SIGKILL');
  throw new Error('service did not become ready');
}

/** Pids of the live (not zombie) children of a process. */
async function childrenOf(pid: number): Promise<number[]> {
  const out: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[1]) === pid && fields[0] !== 'Z') out.push(Number(entry));
  }
  return out;
}

/** Every live descendant of a process (children, their children, …). */
async function descendantsOf(pid: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0, todo = [pid]; i < todo.length; i++) {
    for (const child of await childrenOf(todo[i]!)) {
      out.push(child);
      todo.push(child);
    }
  }
  return out;
}

/** Those of `pids` still running (a zombie counts as gone). */
async function alive(pids: number[]): Promise<number[]> {
  const out: number[] = [];
  for (const pid of pids) {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    if (stat && state !== 'Z') out.push(pid);
  }
  return out;
}

async function eventually(check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('process lifecycle', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('starts on the embedded database, stops cleanly on SIGTERM and SIGINT, and leaves no postgres behind', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'ons-proc-'));
    dirs.push(dataDir);
    const port = await freePort();

    const first = await startMain(dataDir, port);
    const applied = first.lines.find((l) => l.msg === 'migrations up to date')?.applied as string[];
    expect(applied.length).toBeGreaterThan(0);
    expect((await postgresPidsFor(dataDir)).length).toBeGreaterThan(0);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(await postgresPidsFor(dataDir)).toEqual([]);

    // A second start keeps the data and applies nothing.
    const second = await startMain(dataDir, port);
    expect(second.lines.find((l) => l.msg === 'migrations up to date')?.applied).toEqual([]);
    second.child.kill('SIGINT');
    expect(await second.exited).toBe(0);
    expect(await postgresPidsFor(dataDir)).toEqual([]);
  }, 120_000);

  it('runs WORKERS HTTP processes on one port, replaces one that dies, and stops them all', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'ons-proc-'));
    dirs.push(dataDir);
    const port = await freePort();
    const started = await startMain(dataDir, port, { WORKERS: '2', RATE_LIMIT_ENABLED: 'false' });
    // The spawned process (plain node on the built main.js) is the primary.
    const workersOf = async () => {
      const kids = await childrenOf(started.child.pid!);
      const out: number[] = [];
      for (const k of kids) {
        const cmd = await readFile(`/proc/${k}/cmdline`, 'utf8').catch(() => '');
        if (cmd.includes('main.js')) out.push(k);
      }
      return out;
    };
    await eventually(async () => (await workersOf()).length === 2);
    const [victim] = await workersOf();
    process.kill(victim!, 'SIGKILL');
    await eventually(async () => {
      const now = await workersOf();
      return now.length === 2 && !now.includes(victim!);
    });
    // "Two processes" is not "two listening": on a loaded machine the victim may have been the
    // only one listening yet, so the port answers again once the replacement is up.
    const readyz = () =>
      fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status,
        () => 0,
      );
    await eventually(async () => (await readyz()) === 200);

    started.child.kill('SIGTERM');
    expect(await started.exited).toBe(0);
    expect(await postgresPidsFor(dataDir)).toEqual([]);
  }, 120_000);

  it('drains and exits 0 when the process npm start made gets SIGTERM, leaving no node or postgres behind', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'ons-proc-'));
    dirs.push(dataDir);
    const port = await freePort();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: String(port),
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
    };
    delete env.DATABASE_URL;
    const npm = spawn('npm', ['start'], { env, stdio: ['ignore', 'ignore', 'ignore'] });
    const exited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
    const started: number[] = [];
    try {
      await eventually(async () => {
        const res = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null);
        return res?.status === 200;
      }, 60_000);
      started.push(...(await descendantsOf(npm.pid!)));
      expect(started.length).toBeGreaterThan(1); // node and its postgres

      // A request in flight when the signal comes (its body not all sent yet) is answered,
      // with the database still there to answer it (401, not 503).
      const socket = net.connect(port, '127.0.0.1');
      await new Promise((r) => socket.once('connect', r));
      let answer = '';
      socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
      const closed = new Promise((r) => socket.once('close', r));
      const body = JSON.stringify({ email: 'nobody@example.test', password: 'not the password' });
      socket.write(
        `POST /auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
      );
      // Time for the service to read the request's head (nothing tells the test when it has;
      // a loaded machine took more than 50 ms for a whole request elsewhere in this file).
      await new Promise((r) => setTimeout(r, 1000));
      npm.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 500));
      // Written, not ended: a half-closed request is one Node abandons.
      socket.write(body.slice(10));
      await closed;
      expect(answer).toMatch(/^HTTP\/1\.1 401 /);

      expect(await exited).toBe(0);
      await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
      await eventually(async () => (await alive(started)).length === 0, 15_000);
      expect(await postgresPidsFor(dataDir)).toEqual([]);
    } finally {
      // Only what this test started, by pid.
      for (const pid of await alive(started)) process.kill(pid, 'SIGKILL');
      if (npm.exitCode === null) npm.kill('SIGKILL');
    }
  }, 120_000);

  it('lets an in-flight request finish when the service closes', async () => {
    // The service closes only once the request is inside the handler: a fixed wait raced the
    // connection on a loaded machine, and a connection still in the backlog is reset on close.
    let entered!: () => void;
    const inHandler = new Promise<void>((r) => (entered = r));
    const svc = await startTestService({
      extraRoutes: (app) => {
        app.get('/test/slow', { config: { auth: 'none' } }, async () => {
          entered();
          await new Promise((r) => setTimeout(r, 300));
          return { done: true };
        });
      },
    });
    await svc.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = svc.app.server.address() as net.AddressInfo;
    const pending = fetch(`http://127.0.0.1:${port}/test/slow`);
    await inHandler;
    await svc.stop();
    const res = await pending;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ done: true });
  });

  it('cuts a request still running SHUTDOWN_GRACE_MS after the close began, and goes on stopping', async () => {
    let entered!: () => void;
    const inHandler = new Promise<void>((r) => (entered = r));
    let finished = false;
    const svc = await startTestService({
      env: { SHUTDOWN_GRACE_MS: '300' },
      extraRoutes: (app) => {
        app.get('/test/hanging', { config: { auth: 'none' } }, async () => {
          entered();
          await new Promise((r) => setTimeout(r, 5_000));
          finished = true;
          return { done: true };
        });
      },
    });
    await svc.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = svc.app.server.address() as net.AddressInfo;
    const pending = fetch(`http://127.0.0.1:${port}/test/hanging`).then(
      (res) => `answered ${res.status}`,
      () => 'cut',
    );
    await inHandler;
    const t0 = performance.now();
    await svc.stop();
    const stoppedMs = performance.now() - t0;
    expect(await pending).toBe('cut');
    // The grace (300 ms), then the workers and the pool: well before the handler's 5 s.
    expect(stoppedMs).toBeGreaterThanOrEqual(250);
    expect(stoppedMs).toBeLessThan(4_000);
    expect(finished).toBe(false);
  });
});
