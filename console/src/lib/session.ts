import { createOnsClient, type Session } from '@ons/sdk';
import { useEffect, useState } from 'preact/hooks';
import { permissionsOf, type Permission } from './permissions.js';

/**
 * The signed-in person's tokens live in sessionStorage: they survive a reload of the tab but
 * not its closing, and no other tab or site sees them (docs/decisions.md).
 */
const STORAGE_KEY = 'ons.console.session';

function load(): Session | null {
  try {
    const raw = window.sessionStorage.getItem(STORAGE_KEY);
    if (!raw) return null;
    const v = JSON.parse(raw) as Partial<Session>;
    return typeof v.access_token === 'string' && typeof v.refresh_token === 'string'
      ? { access_token: v.access_token, refresh_token: v.refresh_token }
      : null;
  } catch {
    return null;
  }
}

function save(session: Session | null): void {
  if (session) {
    const { access_token, refresh_token } = session;
    window.sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ access_token, refresh_token }));
  } else {
    window.sessionStorage.removeItem(STORAGE_KEY);
  }
}

const listeners = new Set<() => void>();
const emit = () => listeners.forEach((l) => l());

/** The one client of the console: every call to the service goes through the SDK. */
export const ons = createOnsClient({
  baseUrl: window.location.origin,
  session: load() ?? undefined,
  // Each refresh spends the previous refresh token: keep the newest; null: the session ended.
  onSession: (session) => {
    save(session);
    emit();
  },
});

/** Uses the tokens of a sign-in (or an organization switch) from now on. */
export function adoptTokens(tokens: Session): void {
  ons.setSession(tokens);
  save(tokens);
  emit();
}

/** Forgets the session in this tab (after signing out, or when it ended). */
export function forgetSession(): void {
  ons.setSession(null);
  save(null);
  emit();
}

/** What the access token says (docs/auth.md, top): the wallet, organization, session, roles. */
export interface Claims {
  walletId: string;
  organizationId: string | null;
  sessionId: string | null;
  roles: string[];
}

function decodeClaims(token: string): Claims | null {
  try {
    const payload = token.split('.')[1] ?? '';
    const json = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
    const c = JSON.parse(json) as { sub?: unknown; org?: unknown; sid?: unknown; roles?: unknown };
    if (typeof c.sub !== 'string') return null;
    return {
      walletId: c.sub,
      organizationId: typeof c.org === 'string' ? c.org : null,
      sessionId: typeof c.sid === 'string' ? c.sid : null,
      roles: Array.isArray(c.roles)
        ? c.roles.filter((r): r is string => typeof r === 'string')
        : [],
    };
  } catch {
    return null;
  }
}

/** The current claims, or null when nobody is signed in. */
export function currentClaims(): Claims | null {
  const s = ons.session;
  return s ? decodeClaims(s.access_token) : null;
}

/** Re-renders the component whenever the session changes; answers the current claims. */
export function useClaims(): Claims | null {
  const [claims, setClaims] = useState(currentClaims);
  useEffect(() => {
    const update = () => setClaims(currentClaims());
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return claims;
}

/**
 * The signed-in person's permissions in the organization it acts in, from its roles (none
 * signed out or without an organization): what the console offers. The service decides.
 */
export function usePermissions(): ReadonlySet<Permission> {
  const claims = useClaims();
  return permissionsOf(claims?.organizationId ? claims.roles : []);
}
