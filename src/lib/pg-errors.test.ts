import { DrizzleQueryError } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { toAppError } from '../http/errors.js';
import { Code } from './errors.js';
import { StatementFailed } from '../db/prepared.js';
import { isDatabaseUnavailable, isQueryCanceled } from './pg-errors.js';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });
const wrapped = (cause: unknown) => new DrizzleQueryError('select 1', [], cause as Error);

describe('isDatabaseUnavailable', () => {
  it('recognizes a refused, lost or starting server, also under drizzle and aggregate errors', () => {
    expect(
      isDatabaseUnavailable(withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')),
    ).toBe(true);
    expect(isDatabaseUnavailable(wrapped(new Error('Connection terminated unexpectedly')))).toBe(
      true,
    );
    expect(
      isDatabaseUnavailable(wrapped(withCode('the database system is starting up', '57P03'))),
    ).toBe(true);
    expect(isDatabaseUnavailable(withCode('terminating connection', '57P01'))).toBe(true);
    expect(isDatabaseUnavailable(new Error('timeout exceeded when trying to connect'))).toBe(true);
    expect(
      isDatabaseUnavailable(
        new AggregateError([withCode('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED')]),
      ),
    ).toBe(true);
  });

  it('does not take an answer of the server or a defect for an outage', () => {
    expect(isDatabaseUnavailable(wrapped(withCode('duplicate key', '23505')))).toBe(false);
    expect(isDatabaseUnavailable(withCode('syntax error', '42601'))).toBe(false);
    expect(isDatabaseUnavailable(new TypeError('x is undefined'))).toBe(false);
    expect(isDatabaseUnavailable(null)).toBe(false);
  });
});

describe('toAppError for an unavailable database', () => {
  it('answers code 14 with a retry delay and nothing about the server', () => {
    const app = toAppError(wrapped(withCode('connect ECONNREFUSED 10.0.0.5:5432', 'ECONNREFUSED')));
    expect(app?.code).toBe(Code.UNAVAILABLE);
    expect(app?.details).toEqual({ retry_after_seconds: 5 });
    expect(app?.message).not.toContain('10.0.0.5');
  });

  it("keeps a client's own broken connection a 400, not an outage", () => {
    const aborted = Object.assign(withCode('aborted', 'ECONNRESET'), { statusCode: 400 });
    expect(toAppError(aborted)?.code).toBe(Code.INVALID_ARGUMENT);
  });
});

describe('a statement PostgreSQL cancelled (57014)', () => {
  const timedOut = () => withCode('canceling statement due to statement timeout', '57014');

  it('is recognized as it comes: bare, under drizzle, under a named statement', () => {
    expect(isQueryCanceled(timedOut())).toBe(true);
    expect(isQueryCanceled(wrapped(timedOut()))).toBe(true);
    expect(isQueryCanceled(new StatementFailed('p_0123', timedOut()))).toBe(true);
    expect(isQueryCanceled(wrapped(withCode('deadlock detected', '40P01')))).toBe(false);
    expect(isQueryCanceled(new Error('canceling statement due to statement timeout'))).toBe(false);
  });

  it('answers code 14 (503) with a retry delay, never a 500', () => {
    for (const err of [wrapped(timedOut()), new StatementFailed('p_0123', timedOut())]) {
      const app = toAppError(err);
      expect(app?.code).toBe(Code.UNAVAILABLE);
      expect(app?.details).toEqual({ retry_after_seconds: 5 });
      expect(app?.message).toMatch(/took longer than allowed/);
    }
  });
});
