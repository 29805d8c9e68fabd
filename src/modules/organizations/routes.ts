import type { App } from '../../http/app.js';
import { authOf } from '../../http/auth.js';
import type { OrganizationService } from './service.js';
import {
  CreateOrganizationInput,
  Empty,
  IdResponse,
  ListOrganizationsQuery,
  Organization,
  OrganizationList,
  OrganizationPath,
  SwitchOrganizationInput,
  TokenResponse,
  UpdateOrganizationInput,
} from './schema.js';

const tags = ['organizations'];

/**
 * Routes under /organizations/{organizationId} declare `authenticated`: the permission
 * they need is checked by the service against the caller's role in THAT organization
 * (a person may belong to several), after a non-member has been answered 404.
 */
export function registerOrganizationRoutes(app: App, svc: OrganizationService) {
  app.get(
    '/organizations',
    {
      config: { permission: 'authenticated' },
      schema: {
        tags,
        summary: 'ListOrganizations: the organizations the caller belongs to',
        querystring: ListOrganizationsQuery,
        response: { 200: OrganizationList },
      },
    },
    async (req) => {
      const page = await svc.list(authOf(req), req.query);
      return { organizations: page.items, next: page.next, has_more: page.has_more };
    },
  );

  app.post(
    '/organizations',
    {
      config: { permission: 'authenticated', idempotent: true },
      schema: {
        tags,
        summary:
          'CreateOrganization: the creator becomes owner (an API key needs organizations.create)',
        body: CreateOrganizationInput,
        response: { 200: IdResponse },
      },
    },
    async (req) => svc.create(authOf(req), req.body),
  );

  app.post(
    '/organizations/switch',
    {
      config: { auth: 'person', permission: 'authenticated' },
      schema: {
        tags,
        summary: "SwitchOrganization: a new token pair in that organization's context",
        body: SwitchOrganizationInput,
        response: { 200: TokenResponse },
      },
    },
    async (req) =>
      svc.switchTo(authOf(req), req.body.organization_id, {
        device: req.headers['user-agent'] ?? '',
        ip: req.ip,
      }),
  );

  app.get(
    '/organizations/:organizationId',
    {
      config: { permission: 'authenticated' },
      schema: {
        tags,
        summary: 'GetOrganization (needs organizations.read there)',
        params: OrganizationPath,
        response: { 200: Organization },
      },
    },
    async (req) => svc.get(authOf(req), req.params.organizationId),
  );

  app.patch(
    '/organizations/:organizationId',
    {
      config: { permission: 'authenticated', grants: 'self-signup-setting' },
      schema: {
        tags,
        summary:
          'UpdateOrganization (needs organizations.update there; turning allow_self_signup on, the member role within your own permissions)',
        params: OrganizationPath,
        body: UpdateOrganizationInput,
        response: { 200: Empty },
      },
    },
    async (req) => {
      await svc.update(authOf(req), req.params.organizationId, req.body);
      return {};
    },
  );

  app.delete(
    '/organizations/:organizationId',
    {
      config: { permission: 'authenticated' },
      schema: {
        tags,
        summary:
          'DeleteOrganization (owners only; refused with code 9 while it holds a balance or other members)',
        params: OrganizationPath,
        response: { 200: Empty },
      },
    },
    async (req) => {
      await svc.remove(authOf(req), req.params.organizationId);
      return {};
    },
  );
}
