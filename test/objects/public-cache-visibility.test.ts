import { beforeAll, describe, expect, it } from 'vitest';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { insertObject, insertTemplate, putTemplate } from '../helpers/objects.js';
import { useTestService } from '../helpers/harness.js';

/**
 * The public list's cache never outlives a template made private (docs/objects.md, "The
 * public list"): with answers kept a minute, the switch's answer comes after this process
 * forgot them, so the next identical request no longer lists the template's objects.
 */
const svc = useTestService({ env: { PUBLIC_LIST_CACHE_MS: '60000' } });
let owner: TestMember;
let templateId: string;
let objectId: string;
beforeAll(async () => {
  owner = await createMember(svc, { role: 'owner' });
  templateId = await insertTemplate(svc, owner.orgId, { isPublic: true });
  objectId = await insertObject(svc, { templateId });
});

const list = async (url: string) =>
  (await svc.app.inject({ method: 'GET', url })).json<{ objects: { id: string }[] }>().objects;
const switchTo = (isPublic: boolean) =>
  putTemplate(svc, owner.headers, templateId, { is_public: isPublic });

describe('public object list cache and template visibility', () => {
  it('drops a template’s objects from cached answers as soon as the template is private', async () => {
    const urls = ['/public/objects?limit=50', `/public/objects?limit=50&template_id=${templateId}`];
    for (const url of urls) expect((await list(url)).map((o) => o.id)).toContain(objectId);
    // Cached: an object added now does not show within the minute…
    const later = await insertObject(svc, { templateId });
    for (const url of urls) expect((await list(url)).map((o) => o.id)).not.toContain(later);

    // …but the switch to private empties the cache before it answers.
    await switchTo(false);
    for (const url of urls) expect(await list(url)).toEqual([]);

    // Back to public: the objects are listed again at once (the cache was emptied again).
    await switchTo(true);
    for (const url of urls) {
      expect((await list(url)).map((o) => o.id).sort()).toEqual([objectId, later].sort());
    }
  });

  it('keeps answers when a template changes without a visibility switch', async () => {
    const url = '/public/objects?limit=49';
    const before = await list(url);
    await insertObject(svc, { templateId });
    await putTemplate(svc, owner.headers, templateId, { description: 'changed' });
    expect(await list(url)).toEqual(before);
  });
});
