import type { ComponentChildren } from 'preact';
import { useClaims, type Claims } from '../lib/session.js';
import { paths } from '../paths.js';

/**
 * A page for a signed-in person: without a session it says so and links to sign-in; with
 * `organization` it also needs the session to act in an organization.
 */
export function RequireSignIn({
  children,
  organization = false,
}: {
  children: (claims: Claims & { organizationId: string | null }) => ComponentChildren;
  organization?: boolean;
}) {
  const claims = useClaims();
  if (!claims) {
    return (
      <section>
        <h1>Sign in first</h1>
        <p>
          This page needs you to be signed in. <a href={paths.signIn}>Sign in</a> or{' '}
          <a href={paths.signUp}>create an account</a>.
        </p>
      </section>
    );
  }
  if (organization && !claims.organizationId) {
    return (
      <section>
        <h1>No organization yet</h1>
        <p>
          You are not acting in an organization. <a href={paths.organization}>Create one</a> or
          switch to one you belong to.
        </p>
      </section>
    );
  }
  return <>{children(claims)}</>;
}
