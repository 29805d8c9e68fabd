import type { FastifyReply } from 'fastify';

/** Set on an answer that repeats one given before (an idempotent retry). */
export const REPLAYED_HEADER = 'idempotent-replayed';

/**
 * The answer of a signed action: `Idempotent-Replayed: true` when the event bus found the
 * same signed action applied before and answers what it answered then.
 */
export function answerExecuted<T extends { replayed?: true }>(reply: FastifyReply, result: T): T {
  if (result.replayed) void reply.header(REPLAYED_HEADER, 'true');
  return result;
}
