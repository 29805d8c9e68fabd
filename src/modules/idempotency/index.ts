/** Idempotency keys of creating requests (docs/api.md, "Idempotent requests"). */
export {
  IdempotencyService,
  checkKey,
  MAX_KEY_LENGTH,
  type Begun,
  type IdempotencyOptions,
  type KeyId,
  type StoredAnswer,
} from './service.js';
export { IdempotencySweeper } from './sweeper.js';
export { IDEMPOTENCY_CHANNEL, type IdempotencyNotices } from './waiting.js';
export { beginAfterBody } from './routes.js';
