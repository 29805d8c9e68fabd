import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ErrorMessage } from '../components/error-message.js';
import { Progress } from '../components/progress.js';
import { WalletCard } from '../components/wallet-card.js';
import { useAction } from '../lib/hooks.js';
import {
  injectedWallet,
  signInWithWallet,
  signUpWithPasskey,
  signUpWithPassword,
} from '../lib/sign-in.js';
import { paths } from '../paths.js';

/**
 * Create an account: with an email and password (a standalone account that then creates or
 * joins an organization), with a crypto wallet, or with a passkey joining an organization
 * that allows self sign-up (the service needs the organization for a passkey sign-up).
 */
export function SignUpPage() {
  const { route } = useLocation();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [name, setName] = useState('');
  const [organizationId, setOrganizationId] = useState('');
  const wallet = injectedWallet();
  const done = () => route(paths.home);
  const byPassword = useAction(async () => {
    await signUpWithPassword({ email: email.trim(), password, name: name.trim() });
    done();
  });
  const byPasskey = useAction(async () => {
    await signUpWithPasskey(organizationId.trim());
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
        <form
          class="card"
          onSubmit={(e) => {
            e.preventDefault();
            void byPassword.run();
          }}
        >
          <h2>Email and password</h2>
          <label>
            Name (optional)
            <input
              name="name"
              autocomplete="name"
              maxLength={200}
              value={name}
              onInput={(e) => setName(e.currentTarget.value)}
            />
          </label>
          <label>
            Email
            <input
              type="email"
              name="email"
              autocomplete="email"
              required
              value={email}
              onInput={(e) => setEmail(e.currentTarget.value)}
            />
          </label>
          <label>
            Password (8 characters or more)
            <input
              type="password"
              name="new-password"
              autocomplete="new-password"
              required
              minLength={8}
              maxLength={256}
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
          </label>
          <button type="submit" disabled={busy}>
            Create account
          </button>
          {byPassword.busy && <Progress label="Creating your account…" />}
          <ErrorMessage error={byPassword.error} />
        </form>
        <form
          class="card"
          onSubmit={(e) => {
            e.preventDefault();
            void byPasskey.run();
          }}
        >
          <h2>Passkey</h2>
          <p>Join an organization that lets people sign up, with a new passkey.</p>
          <label>
            Organization id
            <input
              name="organization"
              required
              placeholder="org_…"
              pattern="org_[0-9A-Za-z]+"
              value={organizationId}
              onInput={(e) => setOrganizationId(e.currentTarget.value)}
            />
          </label>
          <button type="submit" disabled={busy}>
            Sign up with a passkey
          </button>
          {byPasskey.busy && <Progress label="Creating your passkey…" />}
          <ErrorMessage error={byPasskey.error} />
        </form>
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
