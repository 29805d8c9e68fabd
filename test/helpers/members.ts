import { expect } from 'vitest';
import type { TestMember } from './fixtures.js';
import { lastMessageTo } from './orgs.js';
import type { TestService } from './service.js';

/**
 * Invitation and member-list steps shared by the members tests. `svc` is read through a
 * getter because test files start their service in `beforeAll`.
 */
export function memberSteps(service: () => TestService) {
  const membersUrl = (orgId: string) => `/organizations/${orgId}/members`;

  async function invite(by: TestMember, email: string, role = 'member') {
    const svc = service();
    const res = await svc.app.inject({
      method: 'POST',
      url: membersUrl(by.orgId),
      headers: by.headers,
      payload: { email, role },
    });
    expect(res.statusCode, res.body).toBe(200);
    const id = res.json().id as string;
    const mail = await lastMessageTo(svc, email.toLowerCase());
    const token = /Invitation token: (\S+)/.exec(mail!.body)![1]!;
    return { id, token, mail: mail! };
  }

  function confirm(orgId: string, token: string, memberId: string) {
    return service().app.inject({
      method: 'GET',
      url: `/organizations/${orgId}/invite?token=${encodeURIComponent(token)}&member_id=${memberId}`,
    });
  }

  async function listMembers(by: TestMember, qs = '') {
    const res = await service().app.inject({
      method: 'GET',
      url: `${membersUrl(by.orgId)}${qs ? `?${qs}` : ''}`,
      headers: by.headers,
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{
      members: { id: string; status: string; role: string; wallet_id: string | null }[];
      next: string;
      has_more: boolean;
    }>();
  }

  return { membersUrl, invite, confirm, listMembers };
}
