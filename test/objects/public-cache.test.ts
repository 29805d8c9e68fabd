import { beforeAll, describe, expect, it } from 'vitest';
import { createOrganization } from '../helpers/fixtures.js';
import { insertObject, insertTemplate } from '../helpers/objects.js';
import { useTestService } from '../helpers/harness.js';

let templateId: string;
const svc = useTestService({ env: { PUBLIC_LIST_CACHE_MS: '300' } });
beforeAll(async () => {
  const orgId = await createOrganization(svc);
  templateId = await insertTemplate(svc, orgId, { isPublic: true });
  await insertObject(svc, { templateId });
});

describe('public object list cache', () => {
  it('answers identical requests from a short-lived cache, then sees new objects', async () => {
    const url = '/public/objects?limit=50';
    const first = await svc.app.inject({ method: 'GET', url });
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-type']).toContain('application/json');
    expect(first.json().objects).toHaveLength(1);

    await insertObject(svc, { templateId });
    const cached = await svc.app.inject({ method: 'GET', url });
    expect(cached.body).toBe(first.body);
    // Another query string is its own entry.
    const other = await svc.app.inject({ method: 'GET', url: '/public/objects?limit=49' });
    expect(other.json().objects).toHaveLength(2);

    await new Promise((r) => setTimeout(r, 350));
    const fresh = await svc.app.inject({ method: 'GET', url });
    expect(fresh.json().objects).toHaveLength(2);
  });

  it('does not cache refusals', async () => {
    const bad = await svc.app.inject({ method: 'GET', url: '/public/objects?limit=101' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe(3);
  });
});
