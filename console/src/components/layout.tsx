import type { ComponentChildren } from 'preact';
import { useErrorBoundary } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { useAction } from '../lib/hooks.js';
import { forgetSession, ons, useClaims } from '../lib/session.js';
import { paths } from '../paths.js';
import { ErrorMessage } from './error-message.js';

interface NavItem {
  href: string;
  label: string;
}

const SIGNED_IN_NAV: NavItem[] = [
  { href: paths.home, label: 'Overview' },
  { href: paths.organization, label: 'Organization' },
  { href: paths.members, label: 'Members' },
  { href: paths.balance, label: 'Balance' },
  { href: paths.objects, label: 'Objects' },
  { href: paths.apiKeys, label: 'API keys' },
  { href: paths.webhooks, label: 'Webhooks' },
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
  const nav = claims ? SIGNED_IN_NAV : SIGNED_OUT_NAV;
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
        <PageBoundary>{children}</PageBoundary>
      </main>
    </>
  );
}
