/** Where a sign-in comes from; stored on the session so the person can recognise it. */
export interface ClientContext {
  device?: string;
  ip?: string;
  /** The credential that proved the sign-in (none for a code): removing it ends the session. */
  credentialId?: string;
}
