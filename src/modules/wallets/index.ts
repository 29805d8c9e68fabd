// What other modules may use of wallets. Wallets own wallet records, their addresses and
// credentials, and know nothing of sign-in: `auth` builds its flows on these.
export { Accounts, type NewAccount, type NewCredential } from './accounts.js';
export { AddressNotices, MAX_NOTICES_PER_HOUR, type NoticeKind } from './address-notices.js';
export {
  normaliseEmail,
  normalisePhone,
  oneContact,
  recipientOf,
  type Contact,
} from './contact.js';
export type { Confirmation, CredentialRow, CredentialType, WalletRow } from './repo.js';
export { WalletService, type CredentialSessions } from './service.js';
