import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ClientContext } from '../lib/client.js';

/**
 * The device and address a sign-in comes from, as shown in the session list; with `reply`,
 * also how a sign-in that makes a wallet counts it as a sign-up (`admitSignUp`).
 */
export function clientOf(req: FastifyRequest, reply?: FastifyReply): ClientContext {
  const agent = req.headers['user-agent'];
  const client: ClientContext = {
    device: typeof agent === 'string' ? agent.slice(0, 256) : '',
    ip: req.ip,
  };
  const admit = req.server.signUpAdmission;
  if (reply && admit) client.admitSignUp = () => admit(req, reply);
  return client;
}
