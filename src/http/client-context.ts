import type { FastifyRequest } from 'fastify';
import type { ClientContext } from '../lib/client.js';

/** The device and address a sign-in comes from, as shown in the session list. */
export function clientOf(req: FastifyRequest): ClientContext {
  const agent = req.headers['user-agent'];
  return { device: typeof agent === 'string' ? agent.slice(0, 256) : '', ip: req.ip };
}
