import { spawn } from 'node:child_process';
import path from 'node:path';
import { freePort, sleep } from './processes.js';

/**
 * A real local EVM node for tests: Hardhat 2's `hardhat node` (the `hardhat` devDependency,
 * run with node directly, so the pid is the node's own) on a free loopback port, with the
 * tiny configuration in test/fixtures/evm-node/ (no Solidity sources: nothing is compiled and
 * no compiler is downloaded; with its output piped rather than a terminal, Hardhat fetches
 * no banner or version news either). Automining is on: every transaction gets a block of its
 * own at once; `mine(n)` adds empty blocks on top.
 *
 * Hardhat 3 needs Node.js 22 or later; the project runs on 20, hence Hardhat 2.
 */
export interface EvmNode {
  rpcUrl: string;
  /** The first of Hardhat's well-known dev accounts, funded with 10,000 ETH. */
  privateKey: `0x${string}`;
  /** That account's address, lowercase. */
  address: `0x${string}`;
  /** One JSON-RPC call; throws on an error answer. */
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  /** Mines `n` empty blocks at once (`hardhat_mine`). */
  mine(n?: number): Promise<void>;
  /** The current block number. */
  blockNumber(): Promise<bigint>;
  /** Stops the node by its pid (SIGTERM, SIGKILL after 5 s); safe to call twice. */
  stop(): Promise<void>;
}

const HARDHAT_CLI = path.resolve('node_modules/hardhat/internal/cli/bootstrap.js');
const CONFIG = path.resolve('test/fixtures/evm-node/hardhat.config.cjs');

/** Account #0 of Hardhat's default mnemonic ("test test … junk"): public knowledge. */
const DEV_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const DEV_ADDRESS = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';

async function jsonRpc<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(5_000),
  });
  const body = (await res.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

export async function startEvmNode(): Promise<EvmNode> {
  const port = await freePort();
  const rpcUrl = `http://127.0.0.1:${port}`;
  const child = spawn(
    process.execPath,
    [HARDHAT_CLI, '--config', CONFIG, 'node', '--hostname', '127.0.0.1', '--port', String(port)],
    {
      env: { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  // The node logs every call; only the last few kilobytes are kept, for a failure's message.
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Should the test process end without stop() (a crash, a killed worker), the node goes too.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const stop = async () => {
    process.removeListener('exit', killOnExit);
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };

  const until = Date.now() + 60_000;
  for (;;) {
    try {
      await jsonRpc(rpcUrl, 'eth_chainId');
      break;
    } catch {
      /* not listening yet */
    }
    if (child.exitCode !== null || Date.now() > until) {
      await stop();
      throw new Error(`hardhat node did not start:\n${output}`);
    }
    await sleep(100);
  }

  const rpc = <T>(method: string, params: unknown[] = []) => jsonRpc<T>(rpcUrl, method, params);
  return {
    rpcUrl,
    privateKey: DEV_KEY,
    address: DEV_ADDRESS,
    rpc,
    async mine(n = 1) {
      await rpc('hardhat_mine', [`0x${n.toString(16)}`]);
    },
    async blockNumber() {
      return BigInt(await rpc<string>('eth_blockNumber'));
    },
    stop,
  };
}
