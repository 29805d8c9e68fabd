import type { ComponentChildren } from 'preact';
import { useErrorBoundary } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { useAction } from '../lib/hooks.js';
import type { Permission } from '../lib/permissions.js';
import { forgetSession, ons, useClaims, usePermissions } from '../lib/session.js';
import { paths } from '../paths.js';
import { LowBalanceBanner } from './low-balance-banner.js';
import { ErrorMessage } from './error-message.js';

interface NavItem {
  href: string;
  label: string;
  /** The permission the page's content needs: without it the item is not offered. */
  needs?: Permission;
}

const SIGNED_IN_NAV: NavItem[] = [
  { href: paths.home, label: 'Overview' },
  { href: paths.organization, label: 'Organization' },
  { href: paths.members, label: 'Members', needs: 'members.read' },
  { href: paths.balance, label: 'Balance', needs: 'balance.read' },
  { href: paths.templates, label: 'Templates', needs: 'templates.read' },
  { href: paths.objects, label: 'Objects', needs: 'objects.read' },
  { href: paths.apiKeys, label: 'API keys', needs: 'api-keys.read' },
  { href: paths.policies, label: 'Spend policies', needs: 'policies.read' },
  { href: paths.webhooks, label: 'Webhooks', needs: 'webhooks.read' },
  { href: paths.sessions, label: 'Sessions' },
  { href: paths.explorer, label: 'Explorer' },
];

const SIGNED_OUT_NAV: NavItem[] = [
  { href: paths.signIn, label: 'Sign in' },
  { href: paths.signUp, label: 'Sign up' },
  { href: paths.explorer, label: 'Explorer' },
];

/** A page that failed to render shows why and a way on, never a blank page. */
function PageBoundary({ children }: { children: ComponentChildren }) {
  const [caught, reset] = useErrorBoundary() as [unknown, () => void];
  if (caught) {
    return (
      <section>
        <h1>This page could not be shown</h1>
        <ErrorMessage error={caught} />
        <button type="button" onClick={reset}>
          Try again
        </button>
      </section>
    );
  }
  return <>{children}</>;
}

/** The frame of every page: a skip link, the navigation, sign-out, and the page itself. */
export function Layout({ children }: { children: ComponentChildren }) {
  const claims = useClaims();
  const { path, route } = useLocation();
  const signOut = useAction(async () => {
    try {
      await ons.POST('/auth/logout');
    } finally {
      // Signed out here whatever the service said: the tokens are dropped from this tab.
      forgetSession();
    }
    route(paths.signIn);
  });
  const held = usePermissions();
  // Role-aware: a page whose content the role may not read is not offered (the service
  // would refuse it anyway, and stays the authority for a page opened by its address).
  const nav = claims
    ? SIGNED_IN_NAV.filter((item) => !item.needs || held.has(item.needs))
    : SIGNED_OUT_NAV;
  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={paths.home}>
          Object Network console
        </a>
        <nav aria-label="Main">
          <ul>
            {nav.map((item) => (
              <li key={item.href}>
                <a href={item.href} aria-current={path === item.href ? 'page' : undefined}>
                  {item.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        {claims && (
          <button
            type="button"
            class="secondary"
            disabled={signOut.busy}
            onClick={() => void signOut.run()}
          >
            {signOut.busy ? 'Signing out…' : 'Sign out'}
          </button>
        )}
      </header>
      <main id="main" tabIndex={-1}>
        <ErrorMessage error={signOut.error} />
        {claims && <LowBalanceBanner />}
        <PageBoundary>{children}</PageBoundary>
      </main>
    </>
  );
}
