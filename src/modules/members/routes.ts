import type { App } from '../../http/app.js';
import { authOf } from '../../http/auth.js';
import { Empty, IdResponse, OrganizationPath } from '../organizations/index.js';
import type { MemberService } from './service.js';
import {
  ConfirmInviteBody,
  ConfirmInviteQuery,
  InviteConfirmation,
  InvitePreview,
  InviteMemberInput,
  ListMembersQuery,
  MemberList,
  MemberPath,
  UpdateMemberInput,
} from './schema.js';

const tags = ['members'];

/** Member routes; the service checks `members.*` against the caller's role in that organization. */
export function registerMemberRoutes(app: App, svc: MemberService) {
  app.get(
    '/organizations/:organizationId/members',
    {
      config: { permission: 'authenticated' },
      schema: {
        tags,
        summary: 'ListMembers (needs members.read there)',
        params: OrganizationPath,
        querystring: ListMembersQuery,
        response: { 200: MemberList },
      },
    },
    async (req) => {
      const page = await svc.list(authOf(req), req.params.organizationId, req.query);
      return { members: page.items, next: page.next, has_more: page.has_more };
    },
  );

  app.post(
    '/organizations/:organizationId/members',
    {
      config: { permission: 'authenticated', grants: 'invite', idempotent: true },
      schema: {
        tags,
        summary:
          'InviteMember: an invitation by email (needs members.create; a role within your own permissions, owner by owners only)',
        params: OrganizationPath,
        body: InviteMemberInput,
        response: { 200: IdResponse },
      },
    },
    async (req) => svc.invite(authOf(req), req.params.organizationId, req.body),
  );

  app.patch(
    '/organizations/:organizationId/members/:memberId',
    {
      config: { permission: 'authenticated', grants: 'change-role' },
      schema: {
        tags,
        summary:
          "UpdateMember: change a member's role (needs members.update; a role within your own permissions, owner by owners only)",
        params: MemberPath,
        body: UpdateMemberInput,
        response: { 200: Empty },
      },
    },
    async (req) => {
      await svc.changeRole(
        authOf(req),
        req.params.organizationId,
        req.params.memberId,
        req.body.role,
      );
      return {};
    },
  );

  app.delete(
    '/organizations/:organizationId/members/:memberId',
    {
      config: { permission: 'authenticated' },
      schema: {
        tags,
        summary: 'RemoveMember (needs members.delete; the last owner stays)',
        params: MemberPath,
        response: { 200: Empty },
      },
    },
    async (req) => {
      await svc.remove(authOf(req), req.params.organizationId, req.params.memberId);
      return {};
    },
  );

  app.get(
    '/organizations/:organizationId/invite',
    {
      config: { auth: 'none', grants: 'confirm-invite' },
      schema: {
        tags,
        summary: 'ConfirmInvite: the invitation token makes the membership active',
        params: OrganizationPath,
        querystring: ConfirmInviteQuery,
        response: { 200: InviteConfirmation },
      },
    },
    async (req) => svc.confirmInvite(req.params.organizationId, req.query),
  );

  // Issue 32: the emailed link opens the console's invitation page, which reads this (a GET
  // that changes nothing) and accepts with the POST below on a button press. The GET above
  // stays for clients that call it deliberately.
  app.get(
    '/organizations/:organizationId/invitation',
    {
      config: { auth: 'none' },
      schema: {
        tags,
        summary: 'What an invitation offers (organization, role, email); changes nothing',
        params: OrganizationPath,
        querystring: ConfirmInviteQuery,
        response: { 200: InvitePreview },
      },
    },
    async (req) => svc.previewInvite(req.params.organizationId, req.query),
  );

  app.post(
    '/organizations/:organizationId/invite',
    {
      config: { auth: 'none', grants: 'confirm-invite' },
      schema: {
        tags,
        summary: 'ConfirmInvite, as a POST: the invitation token makes the membership active',
        params: OrganizationPath,
        body: ConfirmInviteBody,
        response: { 200: InviteConfirmation },
      },
    },
    async (req) => svc.confirmInvite(req.params.organizationId, req.body),
  );
}
