import type { App } from '../../http/app.js';
import { authOf } from '../../http/auth.js';
import {
  CreatedId,
  CreateTemplateInput,
  ListTemplatesQuery,
  TemplateIdParams,
  TemplateList,
  TemplateRecord,
  TemplateVersionList,
  TemplateVersionParams,
  TemplateVersionsQuery,
  TemplateVersionRecord,
  UpdateTemplateInput,
} from './schema.js';
import type { TemplateService } from './service.js';

const tags = ['templates'];

export function registerTemplateRoutes(app: App, templates: TemplateService) {
  app.post(
    '/templates',
    {
      config: { permission: 'templates.create', idempotent: true },
      schema: {
        tags,
        summary: 'Create a template',
        body: CreateTemplateInput,
        response: { 200: CreatedId },
      },
    },
    async (req) => templates.create(authOf(req), req.body),
  );

  app.get(
    '/templates',
    {
      config: { permission: 'templates.read' },
      schema: {
        tags,
        summary: "List the organization's templates",
        querystring: ListTemplatesQuery,
        response: { 200: TemplateList },
      },
    },
    async (req) => {
      const page = await templates.list(authOf(req), req.query);
      return { templates: page.items, next: page.next, has_more: page.has_more };
    },
  );

  app.get(
    '/templates/:id',
    {
      config: { permission: 'templates.read' },
      schema: {
        tags,
        summary: 'Get a template',
        params: TemplateIdParams,
        response: { 200: TemplateRecord },
      },
    },
    async (req) => templates.get(authOf(req), req.params.id),
  );

  app.put(
    '/templates/:id',
    {
      config: { permission: 'templates.update' },
      schema: {
        tags,
        summary: 'Change a template',
        params: TemplateIdParams,
        body: UpdateTemplateInput,
        response: { 200: TemplateRecord },
      },
    },
    async (req) => templates.update(authOf(req), req.params.id, req.body),
  );

  app.get(
    '/public/templates/:id',
    {
      config: { auth: 'none' },
      schema: {
        tags,
        summary: 'Get a public template',
        params: TemplateIdParams,
        response: { 200: TemplateRecord },
      },
    },
    async (req) => templates.getPublic(req.params.id),
  );

  app.get(
    '/public/templates/:id/versions/:version',
    {
      config: { auth: 'none' },
      schema: {
        tags,
        summary: "A public template as it was at one version (what objects' chains hashed)",
        params: TemplateVersionParams,
        response: { 200: TemplateVersionRecord },
      },
    },
    async (req) => templates.getPublicVersion(req.params.id, req.params.version),
  );

  app.get(
    '/templates/:id/versions',
    {
      config: { permission: 'templates.read' },
      schema: {
        tags,
        summary: "A template's versions (what object chains hashed), newest first",
        params: TemplateIdParams,
        querystring: TemplateVersionsQuery,
        response: { 200: TemplateVersionList },
      },
    },
    async (req) => templates.listVersions(authOf(req), req.params.id, req.query),
  );
}
