/** Where a sign-in comes from; stored on the session so the person can recognise it. */
export interface ClientContext {
  device?: string;
  ip?: string;
  /** The credential that proved the sign-in (none for a code): removing it ends the session. */
  credentialId?: string;
  /**
   * Called before a sign-in makes a new wallet: counts it as a sign-up of this client (the
   * `signup` rate group, docs/api.md "Rate limits") and throws 429 code 8 over it. Absent when
   * rate limits are off.
   */
  admitSignUp?: () => Promise<void>;
}
