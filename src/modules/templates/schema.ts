import { Type, type Static } from 'typebox';
import { ListEnvelope, listQueryProperties } from '../../lib/list.js';
import { IdParam } from '../../lib/ids.js';
import { LinkUrl } from '../../lib/link-url.js';

/** The action names a template may allow (docs/objects.md, "Templates"). */
export const ACTION_NAMES = ['mint', 'transfer', 'update', 'redeem', 'drop', 'pickup'] as const;
export type ActionName = (typeof ACTION_NAMES)[number];

/**
 * The most a template's faces may take, as the UTF-8 bytes of their JSON (docs/objects.md,
 * "Templates: limits"): every object's chain hashes them at every action, and lists that
 * include them answer them per template.
 */
export const MAX_FACES_BYTES = 65_536;

/** The most templates one organization may hold (docs/objects.md, "Templates: limits"). */
export const MAX_TEMPLATES = 1_000;

const DateTime = Type.String({ format: 'date-time' });
const JsonObject = Type.Record(Type.String(), Type.Unknown());

export const FaceSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 64 }),
    url: LinkUrl,
    config: JsonObject,
    content: Type.String({ maxLength: 65_536 }),
  },
  { additionalProperties: false },
);

const ActionNameSchema = Type.Union([
  Type.Literal('mint'),
  Type.Literal('transfer'),
  Type.Literal('update'),
  Type.Literal('redeem'),
  Type.Literal('drop'),
  Type.Literal('pickup'),
]);

/** A JSON Schema for `custom`; checked to compile by the service (400 code 3 when not). */
const CustomSchema = Type.Union([JsonObject, Type.Null()]);

const templateFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.String({ maxLength: 4000 }),
  category: Type.String({ maxLength: 200 }),
  faces: Type.Array(FaceSchema, { maxItems: 32 }),
  actions: Type.Array(ActionNameSchema, { maxItems: ACTION_NAMES.length, uniqueItems: true }),
  custom_schema: CustomSchema,
  is_public: Type.Boolean(),
};

export const CreateTemplateInput = Type.Object(
  {
    name: templateFields.name,
    description: Type.Optional(templateFields.description),
    category: Type.Optional(templateFields.category),
    faces: Type.Optional(templateFields.faces),
    actions: Type.Optional(templateFields.actions),
    custom_schema: Type.Optional(templateFields.custom_schema),
    is_public: Type.Optional(templateFields.is_public),
  },
  { additionalProperties: false },
);
export type CreateTemplateInput = Static<typeof CreateTemplateInput>;

/** PUT replaces the fields it carries; the ones it leaves out keep their value. */
export const UpdateTemplateInput = Type.Object(
  {
    name: Type.Optional(templateFields.name),
    description: Type.Optional(templateFields.description),
    category: Type.Optional(templateFields.category),
    faces: Type.Optional(templateFields.faces),
    actions: Type.Optional(templateFields.actions),
    custom_schema: Type.Optional(templateFields.custom_schema),
    is_public: Type.Optional(templateFields.is_public),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateTemplateInput = Static<typeof UpdateTemplateInput>;

export const TemplateRecord = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  category: Type.String(),
  faces: Type.Array(
    Type.Object({
      id: Type.String(),
      url: Type.String(),
      config: Type.Object({}, { additionalProperties: true }),
      content: Type.String(),
    }),
  ),
  actions: Type.Array(Type.String()),
  custom_schema: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
  is_public: Type.Boolean(),
  when_created: DateTime,
  when_modified: DateTime,
});
export type TemplateRecord = Static<typeof TemplateRecord>;

export const TemplateList = ListEnvelope('templates', TemplateRecord);

export const ListTemplatesQuery = Type.Object({
  ...listQueryProperties,
  category: Type.Optional(Type.String({ maxLength: 200 })),
  is_public: Type.Optional(Type.Boolean()),
});
export type ListTemplatesQuery = Static<typeof ListTemplatesQuery>;

export const TemplateIdParams = Type.Object({ id: IdParam('template') });
export type TemplateIdParams = Static<typeof TemplateIdParams>;

export const CreatedId = Type.Object({ id: Type.String() });

export const TemplateVersionParams = Type.Object({
  id: IdParam('template'),
  version: Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'from 1' }),
});
export type TemplateVersionParams = Static<typeof TemplateVersionParams>;

/**
 * `GET /public/templates/{id}/versions/{version}`: what an object's chain hashed of its
 * template at an action whose log record names this `template_version` (docs/objects.md).
 */
export const TemplateVersionRecord = Type.Object({
  template_id: Type.String(),
  version: Type.Integer(),
  name: Type.String(),
  description: Type.String(),
  category: Type.String(),
  faces: TemplateRecord.properties.faces,
  when_created: Type.String({ format: 'date-time', description: 'when this version began' }),
});
export type TemplateVersionRecord = Static<typeof TemplateVersionRecord>;

export const TemplateVersionsQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'default 20' })),
  before: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'only versions older' }),
  ),
});

/** `GET /templates/{id}/versions`: newest first; page on with `before` = the last version. */
export const TemplateVersionList = Type.Object({
  versions: Type.Array(TemplateVersionRecord),
  has_more: Type.Boolean(),
});
