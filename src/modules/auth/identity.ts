import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.js';
import type { Db } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import type { MessageSender } from '../notify/sender.js';
import { Accounts } from '../wallets/accounts.js';
import { AddressNotices } from '../wallets/address-notices.js';
import { WalletService } from '../wallets/service.js';
import { CodeFlows } from './code-flows.js';
import { CodeStore } from './codes.js';
import { EoaService } from './eoa.js';
import { GoogleSignIn } from './google.js';
import { PasskeyService } from './passkey.js';
import { PasswordLogin } from './password.js';
import type { SessionService } from './session-service.js';
import { SessionManager } from './sessions.js';
import { PgSignInThrottle, policyOfKey, type SignInThrottle } from './throttle.js';

/** Every sign-in and wallet service, built once (one field of the container). */
export interface Identity {
  accounts: Accounts;
  throttle: SignInThrottle;
  passwords: PasswordLogin;
  codes: CodeStore;
  codeFlows: CodeFlows;
  sessions: SessionManager;
  passkeys: PasskeyService;
  eoa: EoaService;
  google: GoogleSignIn;
  wallets: WalletService;
}

export function createIdentity(deps: {
  config: Config;
  db: Db;
  clock: Clock;
  logger: FastifyBaseLogger;
  sessions: SessionService;
  sender: MessageSender;
}): Identity {
  const { config, db, clock, logger } = deps;
  const notices = new AddressNotices(db, clock, deps.sender, logger);
  const accounts = new Accounts(clock, deps.sessions, notices);
  const throttle = new PgSignInThrottle(db, clock, policyOfKey);
  const codes = new CodeStore(db, clock, deps.sender);
  const sessions = new SessionManager(db, clock, deps.sessions);
  return {
    accounts,
    throttle,
    passwords: new PasswordLogin(db, accounts, throttle),
    codes,
    codeFlows: new CodeFlows(db, clock, codes, accounts, sessions),
    sessions,
    passkeys: new PasskeyService(db, clock, accounts, config.webauthn, logger),
    eoa: new EoaService(db, clock, accounts, config.publicUrl),
    google: new GoogleSignIn(db, clock, accounts, config.google, logger),
    wallets: new WalletService(db, clock, accounts, sessions),
  };
}
