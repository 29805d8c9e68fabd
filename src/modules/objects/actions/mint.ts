import { forbidden, notFound } from '../../../lib/errors.js';
import { permissionsOfRole } from '../../../lib/permissions.js';
import type { MintParams } from './params.js';
import { GENESIS_HASH } from '../hashes.js';
import { normalizeMetadata, type ObjectState } from '../record.js';
import { customRefusal, locationColumns, rehash, toLocation } from './state.js';
import { refuse, type RuleInput, type RuleResult } from './types.js';

/**
 * `mint {template_id, metadata?, custom?, owner?, location?, collection_id?}`: a member of
 * the template's organization whose role has `objects.create` makes a new object of a
 * template that lists mint. `owner` defaults to the signer; `metadata` defaults to the
 * template's; `custom` is checked against the template's custom_schema. The object starts
 * at nonce 0, version 1, its chain at the genesis hash.
 */
export function mint(input: RuleInput): RuleResult {
  const p = input.params as MintParams;
  const t = input.template;
  const role = input.signerRoleInTemplateOrg;
  // Another organization's private template is not there for a signer who is no member of it.
  if (!t || (!t.is_public && t.organization_id !== input.actingOrgId && !role)) {
    return refuse(notFound(`template ${p.template_id}`));
  }
  if (!role || !permissionsOfRole(role).has('objects.create')) {
    return refuse(
      forbidden("the signer must be a member of the template's organization with objects.create"),
    );
  }
  if (!t.actions.includes('mint')) return refuse(forbidden(`template ${t.id} does not list mint`));
  const custom = (p.custom ?? {}) as Record<string, unknown>;
  const bad = customRefusal(input, custom);
  if (bad) return refuse(bad);
  const metadata: ObjectState['metadata'] = normalizeMetadata({
    name: t.name,
    description: t.description,
    category: t.category,
    ...p.metadata,
  }) as ObjectState['metadata'];
  const row: ObjectState = {
    id: input.newObjectId,
    organization_id: t.organization_id,
    template_id: t.id,
    owner: (p.owner ?? input.signerAddress).toLowerCase(),
    metadata,
    custom,
    custom_hash: '',
    ...locationColumns(p.location ? toLocation(p.location) : null),
    ownership_claimed: false,
    is_redeemed: false,
    is_dropped: false,
    is_public: t.is_public,
    nonce: 0,
    version: 1,
    state_hash: '',
    content_hash: '',
    integrity_hash: '',
    prev_integrity_hash: GENESIS_HASH,
    collection_id: p.collection_id ?? null,
    created_at: input.now,
    updated_at: input.now,
  };
  return { ok: true, next: rehash(row, t, GENESIS_HASH, input.actionHash) };
}
