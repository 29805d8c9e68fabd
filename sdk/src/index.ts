/**
 * @ons/sdk: the typed client of the Object Network Service.
 *
 * - `createOnsClient({ baseUrl, apiKey | session })`: every route of the service's
 *   `/openapi.json` as a typed call (`ons.GET`, `ons.POST`, …); errors throw `OnsError`.
 * - `ons.actions`: build the text of an action locally, sign it with an EOA or a passkey,
 *   execute one or many.
 * - `verifyWebhook(headers, rawBody, signingKey)`: check a delivery's signature.
 * - The transparency log: `verifyCheckpoint`, `verifyReceipt`, RFC 6962 proof checks.
 */
export {
  createOnsClient,
  OnsClient,
  type OnsClientOptions,
  type FileRecord,
  type UploadOptions,
} from './client.js';
export { Code, OnsError, isOnsError, type OnsErrorDetails, type OnsErrorInit } from './errors.js';
export {
  IDEMPOTENCY_KEY,
  REFRESH_PATH,
  type FetchFn,
  type RetryOptions,
  type Session,
} from './transport.js';
export type * from './types.js';
export type { paths, components } from './openapi.js';
export {
  ActionsApi,
  type ActionSpec,
  type PreparedText,
  type SignedAction,
  type SignInput,
  type SigningContext,
} from './actions/api.js';
export { canonicalJson } from './actions/canonical-json.js';
export {
  actionHash,
  buildActionText,
  webauthnChallenge,
  type ActionTextInput,
} from './actions/text.js';
export {
  browserPasskey,
  isPasskeySigner,
  signActionText,
  type ActionSigner,
  type BrowserPasskeyOptions,
  type EoaAccount,
  type PasskeyRequest,
  type PasskeySigner,
  type StartAuthentication,
} from './actions/signers.js';
export {
  DEFAULT_TOLERANCE_SECONDS,
  WEBHOOK_SIGNATURE_HEADER,
  verifyWebhook,
  type VerifyWebhookOptions,
  type VerifyWebhookResult,
  type WebhookHeaders,
} from './webhooks.js';
export * from './verify/index.js';
export * from './log/index.js';
