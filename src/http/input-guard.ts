import type { FastifyInstance } from 'fastify';
import { invalid } from '../lib/errors.js';
import { findInputIssue } from '../lib/input-check.js';

/**
 * Refuses, before any schema runs, a request whose path parameters, query string, headers
 * or body hold a NUL character or a lone surrogate in any value or key, or a body nested
 * deeper than MAX_INPUT_DEPTH: 400 code 3 naming the field. Every route is covered
 * without its schema saying so, free-form objects (action params, custom data) included.
 */
export function registerInputGuard(app: FastifyInstance): void {
  app.addHook('preValidation', (req, _reply, done) => {
    const parts: [string, unknown][] = [
      ['params', req.params],
      ['querystring', req.query],
      ['headers', req.headers],
      ['body', req.body],
    ];
    for (const [where, value] of parts) {
      const issue = findInputIssue(value);
      if (issue) {
        const field = issue.field || where;
        done(invalid(`invalid ${where} field ${field}: ${issue.reason}`, [{ ...issue, field }]));
        return;
      }
    }
    done();
  });
}
