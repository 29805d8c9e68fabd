// What other modules may use of wallets. Wallets own wallet records, their addresses and
// credentials, and know nothing of sign-in: `auth` builds its flows on these.
export {
  Accounts,
  type Confirmation,
  type CredentialRow,
  type CredentialType,
  type NewAccount,
  type NewCredential,
  type WalletMemberships,
  type WalletRow,
} from './accounts.js';
export { defaultOrganizations } from './default-org.js';
export { AddressNotices, MAX_NOTICES_PER_HOUR, type NoticeKind } from './address-notices.js';
export {
  normaliseEmail,
  normalisePhone,
  oneContact,
  recipientOf,
  type Contact,
} from './contact.js';
export { WalletService, type CredentialSessions } from './service.js';
export { advanceNonces, raiseSignCounts } from './group-writes.js';
