import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { readOutbox } from '../modules/notify/sender.js';
import { asIso } from '../db/values.js';
import { withCliDatabase } from './database.js';
import { DEPOSITS_USAGE, DepositUsageError, runDepositsCommand } from '../modules/deposits/cli.js';
import { backup, BackupError, restore, type BackupMethod } from './backup.js';

/**
 * The operator command: `npm run ons -- <command> [options]`. Each command prints JSON
 * lines or one plain sentence, and exits non-zero with a message on bad input.
 */
type Command = (args: string[]) => Promise<void>;

const USAGE = `usage: npm run ons -- <command>
  outbox --to <email|phone>    messages the default sender stored for that address, newest first
${DEPOSITS_USAGE}
  backup FILE [--method auto|pg_dump|builtin]
                               the database (one snapshot) and the stored files, into FILE
  restore FILE                 a backup into an empty database (a new DATA_DIR, or an empty
                               database in DATABASE_URL), then this release's migrations`;

const METHODS: readonly BackupMethod[] = ['auto', 'pg_dump', 'builtin'];

/** Runs a backup command; a BackupError is the operator's to fix (exit 1, its message). */
async function backupCommand(fn: () => Promise<unknown>) {
  try {
    console.log(JSON.stringify(await fn()));
  } catch (err) {
    if (err instanceof BackupError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
}

const commands: Record<string, Command> = {
  async outbox(args) {
    const { values } = parseArgs({ args, options: { to: { type: 'string' } } });
    if (!values.to) throw new UsageError('outbox needs --to <email|phone>');
    const to = values.to.includes('@') ? values.to.trim().toLowerCase() : values.to.trim();
    await withCliDatabase(loadConfig(), async ({ db }) => {
      for (const row of await readOutbox(db, to)) {
        console.log(
          JSON.stringify({
            id: row.id,
            channel: row.channel,
            to: row.recipient,
            kind: row.kind,
            subject: row.subject,
            body: row.body,
            when_created: asIso(row.created_at),
          }),
        );
      }
    });
  },
  async deposits(args) {
    const line = await withCliDatabase(loadConfig(), async ({ db }) => {
      try {
        return await runDepositsCommand(db, args);
      } catch (err) {
        if (err instanceof DepositUsageError) throw new UsageError(err.message);
        throw err;
      }
    });
    console.log(line);
  },
  async backup(args) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { method: { type: 'string', default: 'auto' } },
    });
    if (positionals.length !== 1) throw new UsageError('backup needs one FILE');
    const method = values.method as BackupMethod;
    if (!METHODS.includes(method)) {
      throw new UsageError(`--method must be one of ${METHODS.join(', ')}`);
    }
    await backupCommand(() => backup(loadConfig(), positionals[0]!, method));
  },
  async restore(args) {
    const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
    if (positionals.length !== 1) throw new UsageError('restore needs one FILE');
    await backupCommand(() => restore(loadConfig(), positionals[0]!));
  },
};

export class UsageError extends Error {}

export function registerCommand(name: string, command: Command) {
  commands[name] = command;
}

async function main(argv: string[]) {
  const [name, ...rest] = argv;
  const command = name ? commands[name] : undefined;
  if (!command) {
    console.error(USAGE);
    process.exit(2);
  }
  try {
    await command(rest);
  } catch (err) {
    if (
      err instanceof UsageError ||
      (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      console.error((err as Error).message);
      process.exit(2);
    }
    throw err;
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
