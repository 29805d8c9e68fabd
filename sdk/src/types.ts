import type { FetchResponse, MaybeOptionalInit } from 'openapi-fetch';
import type {
  HttpMethod,
  MediaType,
  PathsWithMethod,
  RequestBodyJSON,
  RequiredKeysOf,
  SuccessResponseJSON,
} from 'openapi-typescript-helpers';
import type { paths } from './openapi.js';

// openapi-fetch's own (unexported) rule: the init argument is optional when nothing in it is.
type InitParam<Init> =
  RequiredKeysOf<Init> extends never
    ? [(Init & { [key: string]: unknown })?]
    : [Init & { [key: string]: unknown }];

/** What a route answers on success, typed from the service's description. */
export type Answer<
  Path extends keyof paths,
  Method extends keyof paths[Path] & HttpMethod,
> = SuccessResponseJSON<paths[Path][Method] & Record<string | number, unknown>>;

/** The JSON body a route takes, typed from the service's description. */
export type Body<
  Path extends keyof paths,
  Method extends keyof paths[Path] & HttpMethod,
> = RequestBodyJSON<paths[Path][Method]>;

/** One HTTP method of the service: typed path, params and body; resolves to the answer. */
export type OnsMethod<Method extends HttpMethod> = <
  Path extends PathsWithMethod<paths, Method>,
  Init extends MaybeOptionalInit<paths[Path], Method>,
>(
  path: Path,
  ...init: InitParam<Init>
) => Promise<
  NonNullable<
    FetchResponse<paths[Path][Method] & Record<string | number, unknown>, Init, MediaType>['data']
  >
>;

/** The signed part of an action and its signature: the body of `POST /ebus/execute`. */
export type ExecuteBody = Body<'/ebus/execute', 'post'>;
export type SignatureBody = ExecuteBody['signature'];
export type ActionName = ExecuteBody['action']['name'];
/** A WebAuthn assertion as `credential.toJSON()` (or @simplewebauthn/browser) gives it. */
export type WebAuthnCredential = Extract<SignatureBody, { type: 'webauthn' }>['credential'];
/** What executing one action answers: its action log record and the object after it. */
export type ExecuteAnswer = Answer<'/ebus/execute', 'post'>;
export type ActionLog = ExecuteAnswer['action'];
export type ObjectRecord = ExecuteAnswer['object'];
/** One item of `POST /ebus/actions/batch`'s answer, in the order sent. */
export type BatchItemAnswer = Answer<'/ebus/actions/batch', 'post'>['results'][number];
export type NetworkInfo = Answer<'/public/network', 'get'>;
/** The answer of every route that issues tokens (sign-in, refresh, switch). */
export type TokenAnswer = Answer<'/auth/login', 'post'>;
