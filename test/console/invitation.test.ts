import { afterAll, beforeAll, expect, it } from 'vitest';
import { uniqueEmail } from '../helpers/identity.js';
import { lastMessageTo } from '../helpers/orgs.js';
import {
  checkPage,
  describeWithChromium,
  launchBrowser,
  ownerWithOrganization,
  PASSWORD,
  signInWithPassword,
  startConsoleService,
  type ConsoleBrowser,
  type ConsoleService,
} from './harness.js';

/**
 * Issue 32 item 5: the emailed invitation link opens a console page that shows the
 * organization and role and accepts only on a button press; opening it changes nothing.
 */
describeWithChromium('console: invitations', () => {
  let live: ConsoleService;
  let browser: ConsoleBrowser;

  beforeAll(async () => {
    live = await startConsoleService();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await live?.stop();
  });

  it('shows the invitation, changes nothing when opened, and accepts on the button', async () => {
    const { orgId, api } = await ownerWithOrganization(live.origin, 'inviter', 'Acme Tickets');
    const invitee = uniqueEmail('invitee');
    const { id } = await api.POST('/organizations/{organizationId}/members', {
      params: { path: { organizationId: orgId } },
      body: { email: invitee, role: 'admin' },
    });
    const mail = await lastMessageTo(live.svc, invitee);
    const link = /(http\S+\/console\/invitation\?\S+)/.exec(mail!.body)![1]!;
    expect(link.startsWith(`${live.origin}/console/invitation?`)).toBe(true);
    const statusOf = async () =>
      (
        await api.GET('/organizations/{organizationId}/members', {
          params: { path: { organizationId: orgId } },
        })
      ).members.find((m) => m.id === id)?.status;

    const tab = await browser.newPage();
    const { page } = tab;
    // Fetched as a mail scanner would, then opened twice: still only invited.
    expect((await fetch(link)).status).toBe(200);
    await page.goto(link);
    await page.getByText('You are invited to join').waitFor();
    await page.goto(link);
    const facts = await page.locator('dl.facts').innerText();
    expect(facts).toContain('Acme Tickets');
    expect(facts).toContain('admin');
    expect(facts).toContain(invitee);
    expect(await statusOf()).toBe('invited');
    expect(await checkPage(page, 'invitation')).toEqual([]);

    await page.getByRole('button', { name: 'Accept the invitation' }).click();
    const done = page.getByRole('status').filter({ hasText: 'Accepted' });
    await done.waitFor();
    // No account has that email yet: the member is still shown invited, and told what to do.
    expect(await done.innerText()).toContain('sign up');
    expect(await statusOf()).toBe('invited');

    // Used: the link now says so, as the service's message.
    await page.goto(link);
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toContain('invitation not found, already used or expired');
    expect(await page.getByRole('button', { name: 'Accept the invitation' }).count()).toBe(0);

    await page.goto(`${live.origin}/console/invitation?member_id=${id}`);
    await page.getByText('This link is incomplete').waitFor();
    expect(tab.problems).toEqual([]);
    await tab.context.close();
  });

  it('calls nothing for a link whose organization is not an id, with a person signed in', async () => {
    const { email, orgId } = await ownerWithOrganization(live.origin, 'reader', 'Beta Tickets');
    const tab = await browser.newPage();
    const { page } = tab;
    await signInWithPassword(page, live.origin, email, PASSWORD);
    await page.getByText('Beta Tickets').waitFor();
    const calls: string[] = [];
    page.on('request', (r) => {
      const url = new URL(r.url());
      if (!url.pathname.startsWith('/console/')) calls.push(`${r.method()} ${url.pathname}`);
    });
    // `..` made the page call GET /invitation with the person's token; `.` GET
    // /organizations/invitation.
    for (const organization of ['..', '.', '%2e%2e', `${orgId}/..`, 'wal_1']) {
      await page.goto(
        `${live.origin}/console/invitation?organization_id=${organization}&member_id=mem_1&token=t`,
        { waitUntil: 'networkidle' },
      );
      await page.getByRole('heading', { name: 'Invitation' }).waitFor();
      expect(
        calls.filter((c) => c.includes('invit')),
        organization,
      ).toEqual([]);
      await page.getByText('This link is incomplete or damaged').waitFor();
    }
    expect(tab.problems).toEqual([]);
    await tab.context.close();
  });
});
