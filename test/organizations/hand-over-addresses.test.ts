import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { ADDRESS_PROOFS } from '../../src/modules/auth/code-flows.js';
import { readOutbox } from '../../src/modules/notify/sender.js';
import { bearer, signUp, uniqueEmail, type Tokens } from '../helpers/identity.js';
import { useTestService } from '../helpers/harness.js';

// A wallet handed over keeps only the address just proven (docs/auth.md, "Proof of address").
// A sign-up may name an email AND a phone number: the squatter names the owner's address and
// one of their own, and may prove their own first. When the owner's first proof hands the
// wallet over, the squatter's address must not open it again, neither as an address it
// already holds (`already`: a plain sign-in) nor by proving it afterwards (a hand-over back).
// Every proof that hands a wallet over (ADDRESS_PROOFS) × the squatter's address named or held.

const svc = useTestService();
const { post } = svc;

type Channel = 'email' | 'sms';
type Contact = { email: string } | { phone_number: string };

let phones = 0;
const contactFor = (channel: Channel): Contact => {
  phones += 1;
  return channel === 'email'
    ? { email: uniqueEmail('two') }
    : { phone_number: `+1415556${String(1000 + phones).padStart(4, '0')}` };
};
const addressOf = (c: Contact) => ('email' in c ? c.email : c.phone_number);
const otherChannel = (c: Channel): Channel => (c === 'email' ? 'sms' : 'email');

// The squatter and the owner ask from networks of their own (each has its hourly allowance).
const SQUATTER = '10.66.0.1';
const SQUATTER_EARLIER = '10.66.1.1';
const OWNER = '10.77.0.1';

/** The code of the newest message of `kind` to `to`, when one came since `before` of them. */
async function newCode(to: string, kind: string, before: number): Promise<string | null> {
  const msgs = (await readOutbox(svc.container.db, to, 100)).filter((m) => m.kind === kind);
  if (msgs.length === before) return null;
  return /\b(\d{6})\b/.exec(msgs[0]!.body)![1]!;
}
const countOf = async (to: string, kind: string) =>
  (await readOutbox(svc.container.db, to, 100)).filter((m) => m.kind === kind).length;

/** A one-time-code sign-in for `c` from `ip`: the wallet it opens, or null when no code came. */
async function otpSignIn(c: Contact, ip: string): Promise<Tokens | null> {
  const before = await countOf(addressOf(c), 'otp');
  expect((await post('/auth/otp', c, {}, ip)).statusCode).toBe(200);
  const code = await newCode(addressOf(c), 'otp', before);
  if (code === null) return null;
  const res = await post('/auth/otp/verify', { ...c, code }, {}, ip);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Tokens>();
}

/** The owner proves their address by `route`: the wallet it opens, or null when no code came. */
async function ownerProves(route: string, c: Contact): Promise<Tokens | null> {
  if (route === 'POST /auth/otp/verify') return otpSignIn(c, OWNER);
  const before = await countOf(addressOf(c), 'password-reset');
  expect((await post('/auth/password-reset', c, {}, OWNER)).statusCode).toBe(200);
  const code = await newCode(addressOf(c), 'password-reset', before);
  if (code === null) return null;
  const body = { ...c, code, password: 'the owner password' };
  const res = await post('/auth/password-reset/confirm', body, {}, OWNER);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Tokens>();
}

/** The squatter comes to hold their own address the way a person can. */
async function squatterProves(tokens: Tokens, theirs: Contact) {
  if ('email' in theirs) {
    // Signed in, the email first: /auth/verify is no hand-over.
    expect((await post('/auth/verification-code', {}, bearer(tokens))).statusCode).toBe(200);
    const code = await newCode(theirs.email, 'verification', 0);
    expect((await post('/auth/verify', { code }, bearer(tokens))).statusCode).toBe(200);
  } else {
    // A phone number is proven by a one-time code only (it hands the wallet to its prover).
    expect(await otpSignIn(theirs, SQUATTER)).not.toBeNull();
  }
}

async function walletRow(id: string) {
  const { rows } = await svc.container.db.execute<{
    email: string | null;
    phone_number: string | null;
    email_confirmed_at: unknown;
    phone_confirmed_at: unknown;
  }>(sql`SELECT email, phone_number, email_confirmed_at, phone_confirmed_at
    FROM wallets WHERE id = ${id}`);
  return rows[0]!;
}

async function liveCodesOf(walletId: string, recipient: string): Promise<number> {
  const { rows } = await svc.container.db.execute<{ n: number }>(sql`SELECT count(*)::int AS n
    FROM codes WHERE wallet_id = ${walletId} AND recipient = ${recipient} AND used_at IS NULL`);
  return rows[0]!.n;
}

const HAND_OVERS = ADDRESS_PROOFS.filter((p) => p.handsOver);

describe("a handed-over wallet keeps only the owner's address", () => {
  for (const proof of HAND_OVERS) {
    for (const state of ['named', 'held'] as const) {
      const other = otherChannel(proof.channel);
      const name = `${proof.route} (${proof.channel}); the squatter's ${other === 'sms' ? 'phone number' : 'email'} ${state}`;
      it(`opens the wallet to the owner alone: ${name}`, async () => {
        const owners = contactFor(proof.channel);
        const theirs = contactFor(other);
        const squatter = await signUp(svc, { ...owners, ...theirs, password: 'squatter pw' });
        if (state === 'held') await squatterProves(squatter, theirs);
        // A code to the squatter's address, kept for after the owner's proof.
        const kept = await countOf(addressOf(theirs), 'otp');
        expect((await post('/auth/otp', theirs, {}, SQUATTER_EARLIER)).statusCode).toBe(200);
        const keptCode = await newCode(addressOf(theirs), 'otp', kept);

        const owner = await ownerProves(proof.route, owners);
        // A phone number held was proven by a one-time code: a hand-over to the squatter,
        // which dropped the owner's email, so the owner's request finds no account to code.
        expect(owner === null).toBe(state === 'held' && other === 'sms');
        if (owner !== null) {
          // The wallet the owner's proof opened names the owner's address and nothing else.
          const row = await walletRow(owner.wallet.id);
          expect(row[proof.channel === 'email' ? 'email' : 'phone_number']).toBe(addressOf(owners));
          expect(row[other === 'email' ? 'email' : 'phone_number']).toBeNull();
          expect(row[other === 'email' ? 'email_confirmed_at' : 'phone_confirmed_at']).toBeNull();
          expect(await liveCodesOf(owner.wallet.id, addressOf(theirs))).toBe(0);
        }
        // The squatter's address opens no wallet naming the owner's address: not with the
        // code kept from before, nor with a new one.
        if (keptCode !== null) {
          const res = await post('/auth/otp/verify', { ...theirs, code: keptCode }, {}, SQUATTER);
          if (res.statusCode === 200) {
            const row = await walletRow(res.json<Tokens>().wallet.id);
            expect(Object.values(row)).not.toContain(addressOf(owners));
          } else {
            expect([res.statusCode, res.json<{ code: number }>().code]).toEqual([401, 16]);
          }
        }
        const again = await otpSignIn(theirs, SQUATTER);
        if (again !== null) {
          expect(again.wallet.id).not.toBe(owner?.wallet.id);
          expect(Object.values(await walletRow(again.wallet.id))).not.toContain(addressOf(owners));
        }
      });
    }
  }
});
