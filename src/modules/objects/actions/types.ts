import type { AppError } from '../../../lib/errors.js';
import type { Role } from '../../../lib/permissions.js';
import type { ActionName } from './params.js';
import type { CustomCheck, TemplateRow } from '../../templates/index.js';
import type { ObjectState } from '../record.js';

/**
 * What the rules need of a template: a `templates` row without created_at, read for many
 * templates at once by the group committer (`findTemplates`). `updated_at` keys the compile
 * cache of templates' `validateCustom`.
 */
export type TemplateInfo = Omit<TemplateRow, 'created_at'>;

/** Everything a rule decides on: the action, the signer, the object and its template. */
export interface RuleInput {
  name: ActionName;
  params: Record<string, unknown>;
  signerAddress: string;
  /**
   * The organization the signer acts in (the one that pays): a private object or template of
   * another organization is not there for it (docs/ebus.md, "Refusals").
   */
  actingOrgId: string;
  /** The signer's role in the template's organization (mint); null when not a member. */
  signerRoleInTemplateOrg: Role | null;
  /** The object as it stands (after earlier actions of the same group); null for mint. */
  object: ObjectState | null;
  /** The template of the object (or, for mint, of params.template_id); null if missing. */
  template: TemplateInfo | null;
  actionHash: string;
  now: Date;
  /** Id for a minted object. */
  newObjectId: string;
  /** Checks `custom` against the template's custom_schema (templates' `validateCustom`). */
  checkCustom: (template: TemplateInfo, custom: Record<string, unknown>) => CustomCheck;
}

export type RuleResult = { ok: true; next: ObjectState } | { ok: false; error: AppError };

/** The rule of one action: the object's next state, or why the action is refused. */
export type ActionRule = (input: RuleInput) => RuleResult;

export const refuse = (error: AppError): RuleResult => ({ ok: false, error });
