import { createOnsClient, type Session } from '@ons/sdk';

/**
 * A person signs in; the client keeps the session and refreshes its access token by itself.
 * Store the tokens `onSession` hands over: each refresh spends the previous refresh token.
 */
export async function signIn(baseUrl: string, email: string, password: string) {
  const saved: (Session | null)[] = [];
  const ons = createOnsClient({ baseUrl, onSession: (session) => saved.push(session) });
  ons.setSession(await ons.POST('/auth/login', { body: { email, password } }));
  const me = await ons.GET('/wallets/me');
  return { ons, me, saved };
}
