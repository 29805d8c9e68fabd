import { describe, expect, it } from 'vitest';
import {
  CODE_PURPOSES,
  CODES_PER_RECIPIENT,
  REQUESTS_PER_REQUESTER,
  REQUESTS_PER_SIGNED_IN_WALLET,
  type CodePurpose,
} from '../../src/modules/auth/codes.js';
import { clientSubject, networkOf } from '../../src/lib/client-network.js';
import { bearer, lastCode, outboxCount, signUp, uniqueEmail } from '../helpers/identity.js';
import { useTestService } from '../helpers/harness.js';
import type { TestService } from '../helpers/service.js';

// Codes cannot be silenced: what others ask for an address never stops its owner's code, and
// asking again never cancels a code still valid. One row per kind of code (CODE_PURPOSES).

const svc = useTestService();

type Res = Awaited<ReturnType<TestService['app']['inject']>>;
const post = (url: string, payload: unknown, ip: string, headers: Record<string, string> = {}) =>
  svc.app.inject({ method: 'POST', url, payload: payload as object, headers, remoteAddress: ip });

let nets = 0;
/** An address in a network no other test uses. */
const freshNet = () => {
  nets += 1;
  const n = nets;
  return (host = 1) => `10.${50 + Math.floor(n / 250)}.${n % 250}.${host}`;
};

type Owner = Awaited<ReturnType<typeof signUp>>;

interface Kind {
  /** How many requests one requester may make for one address per hour. */
  share: number;
  /** Whether the request is anonymous (then an unknown address must be answered alike). */
  anonymous: boolean;
  /** Someone else asks for a code to the owner's address (a squatter needs a wallet). */
  someoneElse(owner: Owner): Promise<(ip: string) => Promise<Res>>;
  /** The owner asks. */
  ownerAsks(owner: Owner, ip: string): Promise<Res>;
  /** The owner uses a code. */
  use(owner: Owner, code: string, ip: string): Promise<Res>;
  /** Asks for a code to an address no account has (anonymous kinds only). */
  unknown?(email: string, ip: string): Promise<Res>;
}

const KINDS: Record<CodePurpose, Kind> = {
  password_reset: {
    share: REQUESTS_PER_REQUESTER,
    anonymous: true,
    someoneElse: async (owner) => (ip) => post('/auth/password-reset', { email: owner.email }, ip),
    ownerAsks: (owner, ip) => post('/auth/password-reset', { email: owner.email }, ip),
    use: (owner, code, ip) =>
      post(
        '/auth/password-reset/confirm',
        { email: owner.email, code, password: 'a new long password' },
        ip,
      ),
    unknown: (email, ip) => post('/auth/password-reset', { email }, ip),
  },
  otp: {
    share: REQUESTS_PER_REQUESTER,
    anonymous: true,
    someoneElse: async (owner) => (ip) => post('/auth/otp', { email: owner.email }, ip),
    ownerAsks: (owner, ip) => post('/auth/otp', { email: owner.email }, ip),
    use: (owner, code, ip) => post('/auth/otp/verify', { email: owner.email, code }, ip),
    unknown: (email, ip) => post('/auth/otp', { email }, ip),
  },
  verification: {
    // Only a signed-in wallet naming the address asks: here a squatter's, made with the
    // owner's (unconfirmed) address.
    share: REQUESTS_PER_SIGNED_IN_WALLET,
    anonymous: false,
    someoneElse: async (owner) => {
      const squatter = await signUp(svc, { email: owner.email, password: 'squatter password' });
      return (ip) => post('/auth/verification-code', {}, ip, bearer(squatter));
    },
    ownerAsks: (owner, ip) => post('/auth/verification-code', {}, ip, bearer(owner)),
    use: (owner, code, ip) => post('/auth/verify', { code }, ip, bearer(owner)),
  },
};

function expectThrottled(r: Res) {
  expect(r.statusCode, r.body).toBe(429);
  expect(r.json()).toMatchObject({ code: 8 });
  expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
}

describe('codes cannot be silenced', () => {
  it('covers every kind of code', () => {
    expect(Object.keys(KINDS).sort()).toEqual([...CODE_PURPOSES].sort());
  });

  describe.each(CODE_PURPOSES)('%s', (purpose) => {
    const kind = KINDS[purpose];

    it('six requests by someone else from one address leave the owner a code, and cancel none', async () => {
      const owner = await signUp(svc);
      const ask = await kind.someoneElse(owner);
      const attacker = freshNet();
      const before = await outboxCount(svc, owner.email);
      const answers: Res[] = [];
      for (let i = 0; i < 6; i++) answers.push(await ask(attacker()));
      answers.slice(0, kind.share).forEach((r) => expect(r.statusCode, r.body).toBe(200));
      answers.slice(kind.share).forEach(expectThrottled);
      expect(await outboxCount(svc, owner.email)).toBe(before + kind.share);

      // The owner, from another network, gets a code.
      const ownerNet = freshNet();
      const mine = await kind.ownerAsks(owner, ownerNet());
      expect(mine.statusCode, mine.body).toBe(200);
      expect(await outboxCount(svc, owner.email)).toBe(before + kind.share + 1);
      const code = await lastCode(svc, owner.email);

      // Someone asks again from yet another network: a new code goes out, the owner's stays.
      const again = await ask(freshNet()());
      expect(again.statusCode, again.body).toBe(kind.anonymous ? 200 : 429);
      const used = await kind.use(owner, code, ownerNet(2));
      expect(used.statusCode, used.body).toBe(200);
    });

    if (!kind.anonymous) return; // only anonymous requests could tell
    it('answers alike whether or not an account has the address', async () => {
      const owner = await signUp(svc);
      const ask = await kind.someoneElse(owner);
      const known = freshNet();
      const unknownNet = freshNet();
      const ghost = uniqueEmail('ghost');
      for (let i = 0; i < REQUESTS_PER_REQUESTER + 2; i++) {
        const a = await ask(known());
        const b = await kind.unknown!(ghost, unknownNet());
        expect([a.statusCode, a.body]).toEqual([b.statusCode, b.body]);
      }
      expect(await outboxCount(svc, ghost)).toBe(0);
    });
  });
});

describe('the allowances', () => {
  it('count one network as one requester, and hold under concurrent requests', async () => {
    const owner = await signUp(svc);
    const net = freshNet();
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => post('/auth/otp', { email: owner.email }, net(i + 1))),
    );
    expect(answers.filter((r) => r.statusCode === 200)).toHaveLength(REQUESTS_PER_REQUESTER);
    answers.filter((r) => r.statusCode !== 200).forEach(expectThrottled);
    expect(await outboxCount(svc, owner.email)).toBe(REQUESTS_PER_REQUESTER);
  });

  it('bound what many networks send to one address; a network that proved it still gets a code', async () => {
    const owner = await signUp(svc);
    // The owner confirms the address, then signs in with the password from home; another
    // time they used a one-time code from the office.
    await post('/auth/verification-code', {}, '192.0.2.1', bearer(owner));
    const confirm = await post(
      '/auth/verify',
      { code: await lastCode(svc, owner.email) },
      '192.0.2.1',
      bearer(owner),
    );
    expect(confirm.statusCode, confirm.body).toBe(200);
    const home = freshNet();
    expect(
      (await post('/auth/login', { email: owner.email, password: owner.password }, home()))
        .statusCode,
    ).toBe(200);
    const office = freshNet();
    await post('/auth/otp', { email: owner.email }, office());
    const otp = await post(
      '/auth/otp/verify',
      { email: owner.email, code: await lastCode(svc, owner.email) },
      office(),
    );
    expect(otp.statusCode, otp.body).toBe(200);

    // An hour later (the networks stay trusted for 30 days), others, from enough networks,
    // use up what the address receives from strangers.
    svc.clock.advance(60 * 60_000 + 1);
    const before = await outboxCount(svc, owner.email);
    for (let n = 0; n * REQUESTS_PER_REQUESTER < CODES_PER_RECIPIENT; n++) {
      const net = freshNet();
      for (let i = 0; i < REQUESTS_PER_REQUESTER; i++) {
        expect((await post('/auth/otp', { email: owner.email }, net())).statusCode).toBe(200);
      }
    }
    expect(await outboxCount(svc, owner.email)).toBe(before + CODES_PER_RECIPIENT);
    // A stranger's network now gets the same answer and nothing is sent.
    expect((await post('/auth/otp', { email: owner.email }, freshNet()())).statusCode).toBe(200);
    expect(await outboxCount(svc, owner.email)).toBe(before + CODES_PER_RECIPIENT);
    // The owner's networks still get codes, for every kind asked anonymously.
    for (const [ip, url] of [
      [home(7), '/auth/otp'],
      [office(7), '/auth/password-reset'],
    ] as const) {
      const sent = await outboxCount(svc, owner.email);
      expect((await post(url, { email: owner.email }, ip)).statusCode).toBe(200);
      expect(await outboxCount(svc, owner.email)).toBe(sent + 1);
    }
    const code = await lastCode(svc, owner.email);
    const reset = await post(
      '/auth/password-reset/confirm',
      { email: owner.email, code, password: 'another long password' },
      office(8),
    );
    expect(reset.statusCode, reset.body).toBe(200);
  });

  it("a wallet's wrong confirmation guesses do not wear out another wallet's code for the address", async () => {
    const owner = await signUp(svc);
    const squatter = await signUp(svc, { email: owner.email, password: 'squatter password' });
    const net = freshNet();
    expect((await post('/auth/verification-code', {}, net(), bearer(owner))).statusCode).toBe(200);
    const code = await lastCode(svc, owner.email);
    // The squatter asks for a code of its own, then guesses: each guess spends only its own.
    expect((await post('/auth/verification-code', {}, net(2), bearer(squatter))).statusCode).toBe(
      200,
    );
    const wrong = code === '000000' ? '000001' : '000000';
    for (let i = 0; i < 6; i++) {
      const r = await post('/auth/verify', { code: wrong }, net(2), bearer(squatter));
      expect(r.statusCode).toBe(400);
    }
    // Nor can it use the owner's code: that code confirms only the wallet it was sent for.
    expect((await post('/auth/verify', { code }, net(2), bearer(squatter))).statusCode).toBe(400);
    const used = await post('/auth/verify', { code }, net(), bearer(owner));
    expect(used.statusCode, used.body).toBe(200);
  });

  it('retires the other live codes once one is used', async () => {
    const owner = await signUp(svc);
    const net = freshNet();
    await post('/auth/otp', { email: owner.email }, net());
    const first = await lastCode(svc, owner.email);
    await post('/auth/otp', { email: owner.email }, net());
    const second = await lastCode(svc, owner.email);
    const ok = await post('/auth/otp/verify', { email: owner.email, code: second }, net());
    expect(ok.statusCode).toBe(200);
    if (first !== second) {
      const old = await post('/auth/otp/verify', { email: owner.email, code: first }, net());
      expect(old.statusCode).toBe(401);
    }
  });
});

describe('networkOf', () => {
  it.each([
    ['203.0.113.7', 'net:203.0.113.0/24'],
    ['::ffff:203.0.113.9', 'net:203.0.113.0/24'],
    ['2001:db8:1:2:3:4:5:6', 'net:2001:db8:1:2::/64'],
    ['2001:DB8:1:2::9', 'net:2001:db8:1:2::/64'],
    ['2001:db8::1', 'net:2001:db8:0:0::/64'],
    ['fe80::1%eth0', 'net:fe80:0:0:0::/64'],
    [undefined, 'net:unknown'],
  ])('puts %s in %s', (ip, net) => {
    expect(networkOf(ip)).toBe(net);
  });
});

describe('clientSubject', () => {
  it.each([
    ['203.0.113.7', 'ip:203.0.113.7'],
    ['::ffff:203.0.113.9', 'ip:203.0.113.9'],
    ['2001:db8:1:2:3:4:5:6', 'ip:2001:db8:1:2::/64'],
    ['2001:DB8:1:2::9', 'ip:2001:db8:1:2::/64'],
    ['2001:db8:1:3::9', 'ip:2001:db8:1:3::/64'],
    [undefined, 'ip:unknown'],
  ])('counts %s as %s', (ip, subject) => {
    expect(clientSubject(ip)).toBe(subject);
  });
});
