import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ErrorMessage } from '../components/error-message.js';
import { Field } from '../components/field.js';
import { FormCard, Notice } from '../components/form-card.js';
import { WalletCard } from '../components/wallet-card.js';
import { injectedWallet } from '../lib/eip1193.js';
import { useAction } from '../lib/hooks.js';
import {
  openOrganization,
  organizationIdOf,
  signInWithWallet,
  signUpWithPasskey,
  signUpWithPassword,
} from '../lib/sign-in.js';
import { paths } from '../paths.js';

/**
 * Create an account: with an email and password or a passkey (a standalone account that then
 * creates or joins an organization; a passkey may also join an organization that allows self
 * sign-up, given by its sign-up link or id and shown by name), or with a crypto wallet. Every
 * field is checked before any passkey or wallet prompt (issue 32).
 */
export function SignUpPage() {
  const { route, query } = useLocation();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [name, setName] = useState('');
  const [organization, setOrganization] = useState(query.organization ?? '');
  const [joining, setJoining] = useState<{ id: string; name: string } | null>(null);
  const lookup = useAction(async (text: string) => {
    setJoining(null);
    const id = organizationIdOf(text);
    if (id === null) {
      throw new Error(
        'Paste the organization’s sign-up link or its id (org_…), or leave it empty.',
      );
    }
    const found = await openOrganization(id);
    setJoining(found);
    return found;
  });
  // A sign-up link names the organization: show its name before anything is asked.
  useEffect(() => {
    if (query.organization) void lookup.run(query.organization);
  }, [query.organization]);
  const wallet = injectedWallet();
  const done = () => route(paths.home);
  const byPassword = useAction(async () => {
    await signUpWithPassword({ email: email.trim(), password, name: name.trim() });
    done();
  });
  const byPasskey = useAction(async () => {
    let join: string | undefined;
    if (organization.trim() !== '') {
      // Checked before the passkey prompt: a refused organization never costs a passkey.
      const found = await lookup.run(organization);
      if (!found) return;
      join = found.id;
    }
    await signUpWithPasskey(join);
    done();
  });
  const byWallet = useAction(async () => {
    if (wallet) await signInWithWallet(wallet);
    done();
  });
  const busy = byPassword.busy || byPasskey.busy || byWallet.busy;
  return (
    <section>
      <h1>Sign up</h1>
      <div class="methods">
        <FormCard
          title="Email and password"
          submit="Create account"
          action={byPassword}
          busyLabel="Creating your account…"
          disabled={busy}
        >
          <Field
            label="Name (optional)"
            name="name"
            autocomplete="name"
            maxLength={200}
            value={name}
            onValue={setName}
          />
          <Field
            label="Email"
            type="email"
            name="email"
            autocomplete="email"
            required
            value={email}
            onValue={setEmail}
          />
          <Field
            label="Password (8 characters or more)"
            type="password"
            name="new-password"
            autocomplete="new-password"
            required
            minLength={8}
            maxLength={256}
            value={password}
            onValue={setPassword}
          />
        </FormCard>
        <FormCard
          title="Passkey"
          submit="Sign up with a passkey"
          action={byPasskey}
          busyLabel="Creating your passkey…"
          disabled={busy}
        >
          <p>
            A new account whose passkey signs you in and signs your actions. Leave the organization
            empty to create or join one afterwards.
          </p>
          <Field
            label="Organization to join (optional): its sign-up link or id"
            name="organization"
            placeholder="https://…/console/sign-up?organization=org_…"
            maxLength={2048}
            value={organization}
            onValue={(v) => {
              setOrganization(v);
              setJoining(null);
              lookup.clear();
            }}
            onBlur={() => {
              if (organization.trim() !== '') void lookup.run(organization);
            }}
          />
          {joining && (
            <Notice>
              You will join <strong>{joining.name}</strong>.
            </Notice>
          )}
          <ErrorMessage error={lookup.error} />
        </FormCard>
        <WalletCard
          intro="Your wallet's address becomes your account."
          label="Sign up with a crypto wallet"
          wallet={wallet}
          action={byWallet}
          busy={busy}
        />
      </div>
      <p>
        Already have an account? <a href={paths.signIn}>Sign in</a>.
      </p>
    </section>
  );
}
