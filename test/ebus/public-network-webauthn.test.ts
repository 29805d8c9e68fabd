import { describe, expect, it } from 'vitest';
import { useTestService } from '../helpers/harness.js';

/**
 * `GET /public/network` publishes the RP id and the origins the service checks passkey
 * assertions against, so a verifier can check them too (sdk/src/verify/actions.ts).
 */

const svc = useTestService({
  env: {
    WEBAUTHN_RP_ID: 'Example.COM',
    WEBAUTHN_ORIGINS: 'https://example.com, https://app.example.com:8443',
  },
});

describe('GET /public/network → webauthn', () => {
  it('names the configured RP id (lowercased, as the service hashes it) and every origin', async () => {
    const res = await svc.get('/public/network');
    expect(res.statusCode).toBe(200);
    expect(res.json<{ webauthn: unknown }>().webauthn).toEqual({
      rp_id: 'example.com',
      origins: ['https://example.com', 'https://app.example.com:8443'],
    });
    // Exactly what the service's own passkey checks use.
    expect(svc.config.webauthn.rpId).toBe('example.com');
    expect(svc.config.webauthn.origins).toEqual([
      'https://example.com',
      'https://app.example.com:8443',
    ]);
  });

  it('is described in /openapi.json', async () => {
    const doc = (await svc.get('/openapi.json')).json<{
      paths: Record<string, { get: { responses: Record<string, unknown> } }>;
    }>();
    const schema = doc.paths['/public/network']!.get.responses['200'] as {
      content: { 'application/json': { schema: { properties: Record<string, unknown> } } };
    };
    const props = schema.content['application/json'].schema.properties;
    expect(props.webauthn).toMatchObject({
      type: 'object',
      properties: { rp_id: { type: 'string' }, origins: { type: 'array' } },
    });
  });
});
