import { it } from 'vitest';
import { startTestService } from './helpers/service.js';
it('debug', async () => {
  const s = await startTestService();
  const r = await s.app.inject({ method: 'GET', url: '/public/network' });
  console.log(r.statusCode, r.body);
  console.log(JSON.stringify(s.logs.filter((l) => (l.level as number) >= 40)).slice(0, 3000));
  await s.stop();
});
