import { canonicalJson } from '../actions/canonical-json.js';
import type { ActionContext, PasskeyRules } from './actions.js';
import type { TemplateInfo } from './objects.js';
import type { Source } from './source.js';
import type {
  ActionRecord,
  PublicCredential,
  PublicTemplate,
  SignerLinks,
  TemplateVersion,
} from './types.js';

/**
 * What every verifier reads besides the records it checks, read once each from a `Source`:
 * the network's public key, published passkeys, EOA links to wallets, templates and their
 * versions. `ons-verify` (verifyNetwork) and the console's "Verify in the browser"
 * (verifySealedBatch) both read through this, so neither can check less than the other
 * (issue 32: the console once passed no signer links and called a linked EOA's action bad).
 */

const enc = encodeURIComponent;

/** `GET /public/network` → `webauthn`, as published (services before it was published: none). */
export interface PublishedWebauthn {
  rp_id?: unknown;
  origins?: unknown;
}

export interface PublicActionOptions {
  /**
   * The network's `webauthn` answer, when already read (null: the network publishes none);
   * else `GET /public/network` is read once, when the first passkey action is checked.
   */
  webauthn?: PublishedWebauthn | null;
  /** Origins a passkey assertion may name besides those the network publishes. */
  origins?: readonly string[];
  /** RP ids a passkey assertion may name besides the one the network publishes. */
  rpIds?: readonly string[];
}

/** The RP ids and origins passkey assertions are checked against: published, then added. */
export function passkeyRulesOf(
  published: PublishedWebauthn | null | undefined,
  opts: Pick<PublicActionOptions, 'origins' | 'rpIds'> = {},
): PasskeyRules {
  const origins = Array.isArray(published?.origins)
    ? published.origins.filter((o): o is string => typeof o === 'string')
    : [];
  const rpId = typeof published?.rp_id === 'string' ? [published.rp_id] : [];
  return {
    rpIds: [...new Set([...rpId, ...(opts.rpIds ?? [])])],
    origins: [...new Set([...origins, ...(opts.origins ?? [])])],
  };
}

/**
 * The signature-checking context of `source`: credentials, signer links and the RP id and
 * origins passkey assertions must name, cached.
 */
export function publicActionContext(
  source: Source,
  network: string,
  opts: PublicActionOptions = {},
): ActionContext {
  const credentials = new Map<string, Promise<PublicCredential | null>>();
  const links = new Map<string, Promise<SignerLinks | null>>();
  let rules: Promise<PasskeyRules> | undefined;
  return {
    network,
    passkeyRules() {
      rules ??=
        opts.webauthn !== undefined
          ? Promise.resolve(passkeyRulesOf(opts.webauthn, opts))
          : source
              .json<{ webauthn?: PublishedWebauthn }>('/public/network')
              .then((n) => passkeyRulesOf(n?.webauthn, opts));
      return rules;
    },
    credential(id) {
      let c = credentials.get(id);
      if (!c) {
        c = source.json<PublicCredential>(`/public/credentials/${enc(id)}`);
        credentials.set(id, c);
      }
      return c;
    },
    signerLinks(wallet, signer) {
      const key = `${wallet} ${signer}`;
      let l = links.get(key);
      if (!l) {
        l = source.json<SignerLinks>(`/public/wallets/${enc(wallet)}/signers/${enc(signer)}`);
        links.set(key, l);
      }
      return l;
    },
  };
}

/**
 * The template each action of an object's history was applied with: the version it names,
 * or (records logged before versions were kept) the template as it is now. Null when the
 * template is not public.
 */
export function publicTemplates(source: Source) {
  const templates = new Map<string, Promise<PublicTemplate | null>>();
  const versions = new Map<string, Promise<TemplateVersion | null>>();
  const template = (id: string) => {
    let t = templates.get(id);
    if (!t) {
      t = source.json<PublicTemplate>(`/public/templates/${enc(id)}`);
      templates.set(id, t);
    }
    return t;
  };
  const version = (id: string, v: number) => {
    const key = `${id}@${v}`;
    let t = versions.get(key);
    if (!t) {
      t = source.json<TemplateVersion>(`/public/templates/${enc(id)}/versions/${v}`);
      versions.set(key, t);
    }
    return t;
  };
  return {
    /** The resolver verifyObjectChain takes, or null when the template is not public. */
    async forHistory(
      templateId: string,
      history: ActionRecord[],
    ): Promise<((a: ActionRecord) => TemplateInfo | null) | null> {
      const current = await template(templateId);
      if (!current) return null;
      const byVersion = new Map<number, TemplateVersion | null>();
      for (const a of history) {
        if (a.template_version !== null && !byVersion.has(a.template_version)) {
          byVersion.set(a.template_version, await version(templateId, a.template_version));
        }
      }
      return (a) =>
        a.template_version === null ? current : (byVersion.get(a.template_version) ?? null);
    },
  };
}

/** Every item of a listed route, following `next` (at most `max` items). */
export async function listAll<T>(
  source: Source,
  path: string,
  key: string,
  max = Infinity,
): Promise<T[]> {
  return (await listSome<T>(source, path, key, max)).items;
}

/**
 * The first `max` items of a listed route, following `next`, and whether the list had more
 * (`more`: an item past `max` was read, or the last page read says `has_more`). Reads no page
 * beyond the one that reaches `max`.
 */
export async function listSome<T>(
  source: Source,
  path: string,
  key: string,
  max: number,
): Promise<{ items: T[]; more: boolean }> {
  const out: T[] = [];
  let next: string | null = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const page: { next: string | null; has_more: boolean; [k: string]: unknown } | null =
      await source.json(next === null ? path : `${path}${sep}next=${enc(next)}`);
    if (page === null) throw new Error(`GET ${path}: 404`);
    out.push(...(page[key] as T[]));
    next = page.has_more ? page.next : null;
  } while (next !== null && out.length < max);
  return { items: out.slice(0, max), more: out.length > max || next !== null };
}

/** The ids of every action of a batch's content, private ones too (none when unreadable). */
export function contentIdsOf(content: Uint8Array): string[] {
  try {
    const parsed = JSON.parse(new TextDecoder().decode(content)) as { actions?: unknown };
    return Array.isArray(parsed.actions)
      ? (parsed.actions as { id?: unknown }[]).map((a) => String(a.id))
      : [];
  } catch {
    return [];
  }
}

/** The action records of a batch's content that carry their text (none when unreadable). */
export function contentActionsOf(content: Uint8Array): ActionRecord[] {
  try {
    const parsed = JSON.parse(new TextDecoder().decode(content)) as { actions?: unknown };
    // An action on a private object (content versions 3 and 4) has no text to check.
    return Array.isArray(parsed.actions)
      ? (parsed.actions as (ActionRecord & { private?: boolean })[]).filter(
          (a) => a.private !== true,
        )
      : [];
  } catch {
    return [];
  }
}

/**
 * What an action's signature check covers: its hash, signature and every field its text is
 * rebuilt from. A batch's copy of an action whose public history was checked is skipped only
 * when this is the checked record's; any other copy is checked on its own.
 */
export function signedFormOf(record: ActionRecord): string {
  const r = record as Partial<ActionRecord>;
  return canonicalJson(
    [
      r.hash,
      r.signature_type,
      r.signature,
      r.wallet,
      r.organization_id,
      r.nonce,
      r.name,
      r.params,
      r.expires,
    ].map((v) => v ?? null),
  );
}
