import { DrizzleQueryError } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { StatementFailed } from '../db/prepared.js';
import { Writable } from 'node:stream';
import { createLogger, requestLogger, serializeError, statementName } from './logger.js';

/** node-postgres' DatabaseError as it arrives: SQLSTATE, message and detail quoting values. */
function pgError(code: string, message: string, detail: string) {
  return Object.assign(new Error(message), { severity: 'ERROR', code, detail });
}

describe('statementName', () => {
  it('names a statement by its verb, first table and a digest of its text', () => {
    expect(statementName('insert into "wallets" ("id", "email") values ($1, $2)')).toMatch(
      /^insert wallets #[0-9a-f]{8}$/,
    );
    expect(statementName('UPDATE sessions SET revoked_at = $1')).toMatch(/^update sessions #/);
    expect(statementName('SELECT 1')).toMatch(/^select #[0-9a-f]{8}$/);
    expect(statementName('SELECT 1')).toBe(statementName('SELECT 1'));
    expect(statementName('SELECT 1')).not.toBe(statementName('SELECT 2'));
  });
});

describe('serializeError', () => {
  it("keeps only the statement and SQLSTATE of a failed drizzle query, not its parameters or the server's message", () => {
    const cause = pgError(
      '23514',
      'new row violates check constraint',
      'Failing row contains (wal_1, alice@example.test, $argon2id$v=19$abc).',
    );
    const err = new DrizzleQueryError(
      'insert into wallets (id, email, password_hash) values ($1, $2, $3)',
      ['wal_1', 'alice@example.test', '$argon2id$v=19$abc'],
      cause,
    );
    const out = serializeError(err) as Record<string, unknown>;
    expect(out).toMatchObject({
      message: 'database query failed',
      statement: expect.stringMatching(/^insert wallets #/),
      code: '23514',
    });
    const text = JSON.stringify(out);
    expect(text).not.toContain('alice@example.test');
    expect(text).not.toContain('argon2');
    expect(text).not.toContain('Failing row');
    expect(String(out.stack)).toMatch(/^\s+at /);
  });

  it('names a failed prepared statement and a lost connection under it', () => {
    const lost = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    const out = serializeError(new StatementFailed('p_0123abcd', lost)) as Record<string, unknown>;
    expect(out).toMatchObject({ statement: 'p_0123abcd', code: 'ECONNRESET' });
  });

  it("drops a bare server error's message and detail, which may quote a row", () => {
    const out = serializeError(pgError('22P02', 'invalid input: "bob@x.test"', 'bob@x.test'));
    expect(JSON.stringify(out)).not.toContain('bob@x.test');
    expect(out).toMatchObject({ statement: 'unknown', code: '22P02' });
  });

  it('serializes any other error as pino does, message and stack included', () => {
    const out = serializeError(new TypeError('not a database thing')) as Record<string, unknown>;
    expect(out).toMatchObject({ type: 'TypeError', message: 'not a database thing' });
    expect(String(out.stack)).toContain('not a database thing');
  });
});

describe('requestLogger', () => {
  const capture = (level: string) => {
    const lines: Record<string, unknown>[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
        done();
      },
    });
    return { logger: createLogger(level, stream), lines };
  };
  const flush = () => new Promise((r) => setImmediate(r));

  it('logs at the levels that are on, with the request id and the redaction of the parent', async () => {
    const { logger, lines } = capture('warn');
    const log = requestLogger(logger, { reqId: 'req_1' }, {});
    log.info('not on');
    log.debug('not on');
    log.warn({ headers: { authorization: 'Bearer secret' } }, 'careful');
    log.error({ err: new Error('boom') }, 'failed');
    await flush();
    expect(lines.map((l) => [l.msg, l.reqId])).toEqual([
      ['careful', 'req_1'],
      ['failed', 'req_1'],
    ]);
    expect(JSON.stringify(lines)).not.toContain('secret');
    expect(log.level).toBe('warn');
  });

  it("follows a level set on the request's logger", async () => {
    const { logger, lines } = capture('warn');
    const log = requestLogger(logger, { reqId: 'req_2' }, {});
    log.level = 'debug';
    log.debug('now on');
    await flush();
    expect(lines.map((l) => [l.msg, l.reqId])).toEqual([['now on', 'req_2']]);
    expect(logger.level).toBe('warn');
  });

  it('gives a child of its own when the route sets log options', () => {
    const { logger } = capture('warn');
    expect(requestLogger(logger, { reqId: 'req_3' }, { level: 'error' }).level).toBe('error');
  });
});
