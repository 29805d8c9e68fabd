import { createOnsClient } from '@ons/sdk';

/** An API key (`onsk_…`, made with POST /api-keys) acts for its organization. */
export async function listTemplates(baseUrl: string, apiKey: string) {
  const ons = createOnsClient({ baseUrl, apiKey });
  const { templates, has_more } = await ons.GET('/templates', { params: { query: { limit: 10 } } });
  return { names: templates.map((t) => t.name), has_more };
}
