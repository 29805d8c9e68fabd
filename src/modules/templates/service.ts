import type { Db, Executor } from '../../db/pool.js';
import type { RowRunner } from '../../db/prepared.js';
import { canonicalJson } from '../../lib/canonical-json.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, Code, notFound, unavailable } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { pageOfDated, parseList, type Page } from '../../lib/list.js';
import { requireOrg, requirePermission, type AuthContext } from '../../lib/permissions.js';
import type { Face } from './types.js';
import { checkCustomSchema } from './custom-schema.js';
import { markTemplateSwitch } from '../organizations/index.js';
import * as repo from './repo.js';
import type { TemplateRow } from './types.js';
import { MAX_FACES_BYTES, MAX_TEMPLATES } from './schema.js';
import type {
  CreateTemplateInput,
  ListTemplatesQuery,
  TemplateRecord,
  TemplateVersionRecord,
  UpdateTemplateInput,
} from './schema.js';

export { validateCustom, type CustomCheck } from './custom-schema.js';

/** Faces and actions of the given public templates (the public object list shows them). */
export function publicFacesAndActions(
  run: RowRunner,
  templateIds: string[],
): Promise<repo.FacesActionsRow[]> {
  return repo.publicFacesAndActions(run, templateIds);
}

export function toTemplateRecord(row: TemplateRow): TemplateRecord {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    category: row.category,
    faces: row.faces,
    actions: row.actions,
    custom_schema: row.custom_schema,
    is_public: row.is_public,
    when_created: row.created_at.toISOString(),
    when_modified: row.updated_at.toISOString(),
  };
}

/** What the event bus needs of a template to apply mint and update. */
export interface TemplateForAction {
  id: string;
  organization_id: string;
  actions: string[];
  faces: Face[];
  custom_schema: Record<string, unknown> | null;
  is_public: boolean;
  /** Part of the compile-cache key of validateCustom. */
  updated_at: Date;
}

/**
 * A template as an action sees it, read through the caller's executor (inside the event
 * bus's transaction). Null when there is no such template; the caller checks that it
 * belongs to the acting organization and that it allows the action.
 */
export async function getTemplateForAction(
  exec: Executor,
  templateId: string,
): Promise<TemplateForAction | null> {
  const row = await repo.findTemplateById(exec, templateId);
  if (!row) return null;
  return {
    id: row.id,
    organization_id: row.organization_id,
    actions: row.actions,
    faces: row.faces,
    custom_schema: row.custom_schema,
    is_public: row.is_public,
    updated_at: row.updated_at,
  };
}

/** How often a visibility switch starts again before it answers 503 (`switchVisibility`). */
const SWITCH_ATTEMPTS = 20;

/**
 * Copies a template's new is_public to its objects, those of mints in flight included
 * (docs/decisions.md, "Template visibility switches fence the event bus's mints"). An object
 * copies the flag when it is minted, from the template as its group statement read it, and
 * an uncommitted object is invisible to this copy; so, after the template row is changed
 * and locked (`findTemplate` FOR UPDATE, which also waits for the locked path's mints of it):
 * 1. the objects that exist are copied to (this may wait for groups that change them; it
 *    holds nothing they need);
 * 2. the switch is marked on the organization row, which waits for every group of the
 *    organization holding it (a group locks it last and keeps it until it commits) and
 *    makes every group that read the template before this commits fail its guard when it
 *    locks the row after it;
 * 3. the objects those groups committed are copied to. Holding the organization row, this
 *    must not wait for an object: a group that changes it holds it while it waits for the
 *    organization row (a deadlock). It takes them NOWAIT; one held fails the transaction,
 *    which the caller starts again.
 * Step 1 does the bulk of the work without the organization row, so the event bus of the
 * organization waits only for step 3, the objects minted meanwhile.
 */
async function switchVisibility(
  objects: TemplateObjects,
  listeners: readonly TemplateSwitchListener[],
  tx: Executor,
  s: { orgId: string; templateId: string; isPublic: boolean; now: Date },
): Promise<void> {
  const { orgId, templateId, isPublic } = s;
  await objects.setPublic(tx, orgId, templateId, isPublic);
  // Before the organization row: nothing the organization's groups wait for is held longer.
  for (const l of listeners) await l.switching(tx, templateId, s.now);
  await markTemplateSwitch(tx, orgId);
  await objects.setPublic(tx, orgId, templateId, isPublic, { nowait: true });
}

/**
 * What templates ask of objects (objects implement it, src/container.ts wires it): objects
 * sit above templates and own the `objects` table, whose is_public copies the template's flag.
 */
export interface TemplateObjects {
  setPublic(
    exec: Executor,
    orgId: string,
    templateId: string,
    isPublic: boolean,
    opts?: { nowait?: boolean },
  ): Promise<void>;
  /** After a switch's transaction committed (caches of public answers drop what they hold). */
  switched(): void;
}

/**
 * What else keeps something public of a template's objects (the batches' published contents:
 * src/container.ts wires it): told of a visibility switch in the switch's own transaction,
 * so that it follows every switch that commits, whatever becomes of this process.
 */
export interface TemplateSwitchListener {
  switching(tx: Executor, templateId: string, now: Date): Promise<void>;
}

/**
 * Refuses faces past MAX_FACES_BYTES, or with a value JSON cannot carry as sent (400 code 3):
 * a number too large for a double (`1e309` parses as Infinity, which would be stored as null)
 * or half of a UTF-16 pair. Checked on every save that carries faces, so a template stored
 * larger before the limit stays readable but is never saved larger.
 */
function checkFaces(faces: readonly Face[] | undefined): void {
  if (faces === undefined) return;
  let text: string;
  try {
    // The text every object's hash is computed over (docs/objects.md, "Hashes").
    text = canonicalJson(faces);
  } catch (err) {
    const why = (err as Error).message.replace(/^canonicalJson: (cannot encode value: )?/, '');
    throw new AppError(Code.INVALID_ARGUMENT, `faces cannot be encoded: ${why}`, {
      fields: [{ field: 'faces', reason: why }],
    });
  }
  // Key order aside, the same text as JSON.stringify's: the same number of bytes.
  const bytes = Buffer.byteLength(text);
  if (bytes <= MAX_FACES_BYTES) return;
  throw new AppError(
    Code.INVALID_ARGUMENT,
    `faces take ${bytes} bytes of JSON; a template's faces may take at most ${MAX_FACES_BYTES}`,
    {
      fields: [{ field: 'faces', reason: `more than ${MAX_FACES_BYTES} bytes of JSON` }],
      max_faces_bytes: MAX_FACES_BYTES,
    },
  );
}

/** `now`, or 1 ms after `prev` when the clock has not moved: the compile cache keys on it. */
function laterThan(now: Date, prev: Date): Date {
  return now.getTime() > prev.getTime() ? now : new Date(prev.getTime() + 1);
}

/**
 * Templates: what objects are minted from (docs/objects.md, "Templates"). No delete: objects refer
 * to them.
 */
export class TemplateService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly objects: TemplateObjects,
    private readonly switches: readonly TemplateSwitchListener[] = [],
    /** Where the anonymous reads run: the public reads' pool (src/db/pool.ts). */
    private readonly publicDb: Executor = db,
  ) {}

  /** Creates a template in the caller's organization. */
  async create(auth: AuthContext, input: CreateTemplateInput): Promise<{ id: string }> {
    requirePermission(auth, 'templates.create');
    const orgId = requireOrg(auth);
    if (input.custom_schema) checkCustomSchema(input.custom_schema);
    checkFaces(input.faces);
    const id = newId('template');
    await this.db.transaction(async (tx) => {
      await repo.lockTemplateCreates(tx, orgId);
      if ((await repo.countTemplates(tx, orgId)) >= MAX_TEMPLATES) {
        throw new AppError(
          Code.RESOURCE_EXHAUSTED,
          `an organization holds at most ${MAX_TEMPLATES} templates`,
          { max_templates: MAX_TEMPLATES },
        );
      }
      await repo.insertTemplate(tx, {
        id,
        organization_id: orgId,
        name: input.name,
        description: input.description ?? '',
        category: input.category ?? '',
        faces: input.faces ?? [],
        actions: input.actions ?? [],
        custom_schema: input.custom_schema ?? null,
        is_public: input.is_public ?? false,
        created_at: this.clock.now(),
      });
    });
    return { id };
  }

  /** The organization's templates (list conventions; filters name, category, is_public). */
  async list(auth: AuthContext, q: ListTemplatesQuery): Promise<Page<TemplateRecord>> {
    requirePermission(auth, 'templates.read');
    const orgId = requireOrg(auth);
    const p = parseList(q, repo.TEMPLATE_LIST);
    const rows = await repo.listTemplates(
      this.db,
      orgId,
      {
        id: q.id,
        name: q.name,
        autocomplete: q.autocomplete,
        category: q.category,
        isPublic: q.is_public,
        dates: q,
      },
      p,
    );
    const page = pageOfDated(rows, p);
    return { ...page, items: page.items.map(toTemplateRecord) };
  }

  /** One template of the caller's organization; another organization's is 404. */
  async get(auth: AuthContext, id: string): Promise<TemplateRecord> {
    requirePermission(auth, 'templates.read');
    const row = await repo.findTemplate(this.db, requireOrg(auth), id);
    if (!row) throw notFound('template');
    return toTemplateRecord(row);
  }

  /** A public template, for anyone; a private or missing one is 404. */
  async getPublic(id: string): Promise<TemplateRecord> {
    const row = await repo.findTemplateById(this.publicDb, id);
    if (!row || !row.is_public) throw notFound('template');
    return toTemplateRecord(row);
  }

  /** One version of a public template; a private or missing template or version is 404. */
  async getPublicVersion(id: string, version: number): Promise<TemplateVersionRecord> {
    const row = await repo.findPublicTemplateVersion(this.publicDb, id, version);
    if (!row) throw notFound('template version');
    return toVersionRecord(row);
  }

  /** The versions of one of the caller's organization's templates, newest first. */
  async listVersions(
    auth: AuthContext,
    id: string,
    q: { limit?: number | undefined; before?: number | undefined },
  ): Promise<{ versions: TemplateVersionRecord[]; has_more: boolean }> {
    requirePermission(auth, 'templates.read');
    const orgId = requireOrg(auth);
    if (!(await repo.findTemplate(this.db, orgId, id))) throw notFound('template');
    const limit = q.limit ?? 20;
    const rows = await repo.listTemplateVersions(this.db, orgId, id, { limit, before: q.before });
    return { versions: rows.slice(0, limit).map(toVersionRecord), has_more: rows.length > limit };
  }

  /**
   * Replaces the fields given. A change of is_public is copied to the template's objects
   * in the same transaction, so the public list never shows a private template's objects,
   * including those a mint in flight is writing (`switchVisibility`).
   */
  async update(auth: AuthContext, id: string, input: UpdateTemplateInput): Promise<TemplateRecord> {
    requirePermission(auth, 'templates.update');
    const orgId = requireOrg(auth);
    if (input.custom_schema) checkCustomSchema(input.custom_schema);
    checkFaces(input.faces);
    for (let attempt = 1; ; attempt++) {
      try {
        const { record, switched } = await this.db.transaction((tx) =>
          this.updateIn(tx, orgId, id, input),
        );
        if (switched) this.objects.switched();
        return record;
      } catch (err) {
        // An object held by a group waiting for the organization row: start again.
        if (!repo.isLockNotAvailable(err)) throw err;
        if (attempt >= SWITCH_ATTEMPTS) throw unavailable(1);
        await new Promise((r) => setTimeout(r, 5 * attempt + Math.random() * 10 * attempt));
      }
    }
  }

  private async updateIn(
    tx: Executor,
    orgId: string,
    id: string,
    input: UpdateTemplateInput,
  ): Promise<{ record: TemplateRecord; switched: boolean }> {
    // FOR UPDATE: waits for the locked path's groups that mint it (they share-lock it).
    const row = await repo.findTemplate(tx, orgId, id, true);
    if (!row) throw notFound('template');
    const next: TemplateRow = {
      ...row,
      name: input.name ?? row.name,
      description: input.description ?? row.description,
      category: input.category ?? row.category,
      faces: input.faces ?? row.faces,
      actions: input.actions ?? row.actions,
      custom_schema: input.custom_schema !== undefined ? input.custom_schema : row.custom_schema,
      is_public: input.is_public ?? row.is_public,
      updated_at: laterThan(this.clock.now(), row.updated_at),
    };
    await repo.saveTemplate(tx, next);
    const switched = next.is_public !== row.is_public;
    if (switched) {
      await switchVisibility(this.objects, this.switches, tx, {
        orgId,
        templateId: id,
        isPublic: next.is_public,
        now: next.updated_at,
      });
    }
    return { record: toTemplateRecord(next), switched };
  }
}

function toVersionRecord(row: repo.TemplateVersionRow): TemplateVersionRecord {
  return {
    template_id: row.template_id,
    version: row.version,
    name: row.name,
    description: row.description,
    category: row.category,
    faces: row.faces,
    when_created: row.created_at.toISOString(),
  };
}
