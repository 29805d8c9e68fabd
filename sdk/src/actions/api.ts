import type { Session } from '../transport.js';
import type {
  ActionName,
  BatchItemAnswer,
  ExecuteAnswer,
  ExecuteBody,
  NetworkInfo,
  OnsMethod,
} from '../types.js';
import {
  isPasskeySigner,
  signActionText,
  type ActionSigner,
  type PasskeyRequest,
} from './signers.js';
import { actionHash, buildActionText, webauthnChallenge } from './text.js';

/** What the actions API needs of its client. */
export interface ActionsHost {
  GET: OnsMethod<'get'>;
  POST: OnsMethod<'post'>;
  readonly session: Session | null;
}

/** One action: its name and params (docs/ebus.md, "Actions and their params"). */
export interface ActionSpec {
  name: ActionName;
  params: Record<string, unknown>;
}

/** Where an action is signed: each field defaults to what the service or the session says. */
export interface SigningContext {
  /**
   * The acting wallet's address. Default: the signed-in person's wallet; with an API key and
   * an EOA signer, the wallet that EOA signs for (its own address, or the wallet it is linked
   * to); with an API key and a passkey, the key's creator's wallet.
   */
  wallet?: string;
  /** Default: `GET /ebus/nonce` (the wallet's next number). */
  nonce?: number;
  /** Default: five minutes from now. The service refuses more than 24 hours ahead. */
  expires?: string | Date;
  /** Default: the client's `organizationId`, else the session's, else the API key's. */
  organizationId?: string;
  /** Default: `GET /public/network` (read once per client). */
  network?: string;
  /** Not signed: refuses the action if its fee would be higher (`max_fee_wei`). */
  maxFeeWei?: string;
  /** For a passkey signer: the RP id and credential ids to ask for. */
  passkey?: Omit<PasskeyRequest, 'challenge' | 'userVerification'>;
}

export interface SignInput extends ActionSpec, SigningContext {
  signer: ActionSigner;
}

/** The signed text and the exact body `execute` sends. */
export interface PreparedText {
  text: string;
  /** `0x` + hex SHA-256 of the text: the action log record's `hash`. */
  hash: string;
  /** base64url(SHA-256(text)): what a passkey signs. */
  challenge: string;
  action: ExecuteBody['action'];
}

export interface SignedAction extends PreparedText {
  body: ExecuteBody;
}

const DEFAULT_EXPIRY_MS = 5 * 60_000;

/**
 * Actions signed on the client (docs/ebus.md, "The text to sign"): the text is built here,
 * byte for byte what `POST /ebus/prepare` would answer, so a signature never depends on
 * trusting a text the network sent.
 */
export class ActionsApi {
  private networkInfo: Promise<NetworkInfo> | null = null;
  private keyOrganization: Promise<string> | null = null;

  constructor(
    private readonly host: ActionsHost,
    private readonly defaults: { organizationId?: string | undefined } = {},
  ) {}

  /** `GET /public/network`, read once. */
  network(): Promise<NetworkInfo> {
    this.networkInfo ??= this.host.GET('/public/network').catch((err: unknown) => {
      this.networkInfo = null;
      throw err;
    });
    return this.networkInfo;
  }

  /**
   * The text of an action and its hashes, built locally. Fields left out are looked up
   * (wallet and nonce from `GET /ebus/nonce`, the network from `GET /public/network`).
   */
  async prepareText(
    input: ActionSpec & SigningContext & { signer?: ActionSigner },
  ): Promise<PreparedText> {
    const [network, walletNonce] = await Promise.all([
      input.network ?? this.network().then((n) => n.network),
      this.walletAndNonce(input),
    ]);
    const organizationId = await this.organization(input.organizationId, walletNonce);
    const expires = toIso(input.expires ?? new Date(Date.now() + DEFAULT_EXPIRY_MS));
    const action: ExecuteBody['action'] = {
      wallet: walletNonce.wallet.toLowerCase(),
      name: input.name,
      params: input.params,
      nonce: walletNonce.nonce,
      expires,
    };
    const text = buildActionText({ network, organizationId, ...action });
    const [hash, challenge] = await Promise.all([actionHash(text), webauthnChallenge(text)]);
    return { text, hash, challenge, action };
  }

  /** Builds the text of an action and signs it; `execute` sends the result. */
  async sign(input: SignInput): Promise<SignedAction> {
    const prepared = await this.prepareText(input);
    const signature = await signActionText(input.signer, prepared.text, input.passkey);
    const body: ExecuteBody = {
      action: prepared.action,
      signature,
      ...(input.maxFeeWei !== undefined ? { max_fee_wei: input.maxFeeWei } : {}),
    };
    return { ...prepared, body };
  }

  /**
   * Signs several actions of one wallet with consecutive nonces (from `nonce`, else the
   * wallet's next), in order, for `executeMany`.
   */
  async signMany(
    actions: readonly ActionSpec[],
    context: SigningContext & { signer: ActionSigner },
  ): Promise<SignedAction[]> {
    if (actions.length === 0) return [];
    const [network, first] = await Promise.all([
      context.network ?? this.network().then((n) => n.network),
      this.walletAndNonce(context),
    ]);
    const organizationId = await this.organization(context.organizationId, first);
    const expires = toIso(context.expires ?? new Date(Date.now() + DEFAULT_EXPIRY_MS));
    const signed: SignedAction[] = [];
    // One at a time: a browser shows one passkey prompt at a time.
    for (const [i, spec] of actions.entries()) {
      signed.push(
        await this.sign({
          ...context,
          ...spec,
          network,
          organizationId,
          wallet: first.wallet,
          nonce: first.nonce + i,
          expires,
        }),
      );
    }
    return signed;
  }

  /** `POST /ebus/execute`: applies one signed action; throws `OnsError` if refused. */
  async execute(signed: SignedAction | ExecuteBody): Promise<ExecuteAnswer> {
    return this.host.POST('/ebus/execute', { body: bodyOf(signed) });
  }

  /** Signs then executes one action. */
  async signAndExecute(input: SignInput): Promise<ExecuteAnswer> {
    return this.execute(await this.sign(input));
  }

  /**
   * `POST /ebus/actions/batch` (up to 100): signed actions as they are, or action specs
   * signed first with consecutive nonces. Answers per item, in order: `applied` with the
   * action and object, or `refused` with the error; a refused item does not stop the rest.
   */
  async executeMany(signed: readonly (SignedAction | ExecuteBody)[]): Promise<BatchItemAnswer[]>;
  async executeMany(
    actions: readonly ActionSpec[],
    context: SigningContext & { signer: ActionSigner },
  ): Promise<BatchItemAnswer[]>;
  async executeMany(
    items: readonly (ActionSpec | SignedAction | ExecuteBody)[],
    context?: SigningContext & { signer: ActionSigner },
  ): Promise<BatchItemAnswer[]> {
    const bodies = context
      ? (await this.signMany(items as readonly ActionSpec[], context)).map((s) => s.body)
      : (items as readonly (SignedAction | ExecuteBody)[]).map(bodyOf);
    const answer = await this.host.POST('/ebus/actions/batch', { body: { actions: bodies } });
    return answer.results;
  }

  /**
   * The acting wallet and its next number: as given, else from `GET /ebus/nonce` — the
   * signed-in wallet, or with an API key and an EOA signer the wallet that EOA signs for (its
   * own address, or a wallet it is linked to). The answer names the caller's organization too.
   */
  private async walletAndNonce(
    input: SigningContext & { signer?: ActionSigner },
  ): Promise<WalletNonce> {
    const signer = input.signer;
    if (input.wallet !== undefined && input.nonce !== undefined) {
      return { wallet: input.wallet, nonce: input.nonce };
    }
    const query =
      input.wallet !== undefined
        ? { address: input.wallet }
        : this.host.session === null && signer !== undefined && !isPasskeySigner(signer)
          ? { signer: signer.address }
          : {};
    const answer = await this.host.GET('/ebus/nonce', { params: { query } });
    return {
      wallet: answer.address,
      nonce: input.nonce ?? answer.nonce,
      organizationId: answer.organization_id || undefined,
    };
  }

  /**
   * The organization an action is signed in: as given, the client's, the session's, or
   * (an API key belongs to one) the one `GET /ebus/nonce` names — no permission needed
   * beyond being a credential, never `organizations.read`.
   */
  private async organization(explicit: string | undefined, known?: WalletNonce): Promise<string> {
    const fixed = explicit ?? this.defaults.organizationId;
    if (fixed !== undefined) return fixed;
    const session = this.host.session;
    if (session !== null) {
      const org = claimsOf(session.access_token).org;
      if (typeof org === 'string' && org !== '') return org;
      throw new Error(
        'the session acts in no organization: switch to one (POST /organizations/switch) or pass organizationId',
      );
    }
    if (known?.organizationId !== undefined) return known.organizationId;
    this.keyOrganization ??= this.host
      .GET('/ebus/nonce', { params: { query: known ? { address: known.wallet } : {} } })
      .then((answer) => {
        if (answer.organization_id === '') {
          throw new Error('cannot tell the organization: pass organizationId');
        }
        return answer.organization_id;
      })
      .catch((err: unknown) => {
        this.keyOrganization = null;
        throw err;
      });
    return this.keyOrganization;
  }
}

interface WalletNonce {
  wallet: string;
  nonce: number;
  organizationId?: string | undefined;
}

function bodyOf(item: SignedAction | ExecuteBody): ExecuteBody {
  return 'body' in item ? item.body : item;
}

function toIso(expires: string | Date): string {
  return typeof expires === 'string' ? expires : expires.toISOString();
}

/** The claims of a JWT (not verified: the service does that; this only reads `org`). */
function claimsOf(jwt: string): Record<string, unknown> {
  const part = jwt.split('.')[1];
  if (part === undefined) return {};
  try {
    const b64 = part.replace(/-/g, '+').replace(/_/g, '/');
    const json = new TextDecoder().decode(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)));
    const claims: unknown = JSON.parse(json);
    return typeof claims === 'object' && claims !== null ? (claims as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
