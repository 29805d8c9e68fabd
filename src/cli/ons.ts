import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { readOutbox } from '../modules/notify/sender.js';
import { asIso } from '../db/values.js';
import { withCliDatabase } from './database.js';
import { DEPOSITS_USAGE, DepositUsageError, runDepositsCommand } from '../modules/deposits/cli.js';

/**
 * The operator command: `npm run ons -- <command> [options]`. Each command prints JSON
 * lines or one plain sentence, and exits non-zero with a message on bad input.
 */
type Command = (args: string[]) => Promise<void>;

const USAGE = `usage: npm run ons -- <command>
  outbox --to <email|phone>    messages the default sender stored for that address, newest first
${DEPOSITS_USAGE}`;

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
