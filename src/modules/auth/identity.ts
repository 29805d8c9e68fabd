import type { BaseLogger } from 'pino';
import type { Config } from '../../config.js';
import type { Db } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import type { MessageSender } from '../notify/index.js';
import type { Accounts } from '../wallets/index.js';
import { CodeFlows } from './code-flows.js';
import { CodeStore } from './codes.js';
import { EoaService } from './eoa.js';
import { GoogleSignIn } from './google.js';
import { HandOver, type ApiKeyCache } from './hand-over.js';
import { PasskeyService } from './passkey.js';
import { PasswordLogin } from './password.js';
import type { SessionService } from './session-service.js';
import { SessionManager } from './sessions.js';
import { SignIn } from './sign-in.js';
import { SignUp } from './sign-up.js';
import { PgSignInThrottle, policyOfKey, type SignInThrottle } from './throttle.js';

/** Every sign-up and sign-in service, built once (one field of the container). */
export interface Identity {
  /** The wallets' records these flows build on (`wallets/index.ts`). */
  accounts: Accounts;
  throttle: SignInThrottle;
  signUp: SignUp;
  passwords: PasswordLogin;
  codes: CodeStore;
  codeFlows: CodeFlows;
  sessions: SessionManager;
  passkeys: PasskeyService;
  eoa: EoaService;
  google: GoogleSignIn;
}

export function createIdentity(deps: {
  config: Config;
  db: Db;
  clock: Clock;
  logger: BaseLogger;
  sessions: SessionService;
  sender: MessageSender;
  accounts: Accounts;
  /** This instance's API-key cache, told at once which keys a hand-over revoked. */
  apiKeys: ApiKeyCache;
}): Identity {
  const { config, db, clock, logger, accounts } = deps;
  const signIn = new SignIn(accounts, deps.sessions);
  const throttle = new PgSignInThrottle(db, clock, policyOfKey);
  const codes = new CodeStore(db, clock, deps.sender, throttle);
  const sessions = new SessionManager(db, clock, deps.sessions);
  return {
    accounts,
    throttle,
    signUp: new SignUp(db, clock, accounts, signIn),
    passwords: new PasswordLogin(db, accounts, signIn, throttle, codes),
    codes,
    codeFlows: new CodeFlows(
      db,
      codes,
      accounts,
      signIn,
      sessions,
      new HandOver(clock, accounts, sessions, deps.apiKeys),
    ),
    sessions,
    passkeys: new PasskeyService(db, clock, accounts, signIn, config.webauthn, logger),
    eoa: new EoaService(db, clock, accounts, signIn, config.publicUrl),
    google: new GoogleSignIn(db, clock, accounts, signIn, config.google, logger),
  };
}
