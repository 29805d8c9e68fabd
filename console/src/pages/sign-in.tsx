import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ErrorMessage } from '../components/error-message.js';
import { Field } from '../components/field.js';
import { FormCard } from '../components/form-card.js';
import { Progress } from '../components/progress.js';
import { WalletCard } from '../components/wallet-card.js';
import { injectedWallet } from '../lib/eip1193.js';
import { useAction } from '../lib/hooks.js';
import { signInWithPasskey, signInWithPassword, signInWithWallet } from '../lib/sign-in.js';
import { paths } from '../paths.js';

/** Sign in with a passkey, a crypto wallet, or an email and password. */
export function SignInPage() {
  const { route } = useLocation();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const wallet = injectedWallet();
  const done = () => route(paths.home);
  const byPassword = useAction(async () => {
    await signInWithPassword(email.trim(), password);
    done();
  });
  const byPasskey = useAction(async () => {
    await signInWithPasskey();
    done();
  });
  const byWallet = useAction(async () => {
    if (wallet) await signInWithWallet(wallet);
    done();
  });
  const busy = byPassword.busy || byPasskey.busy || byWallet.busy;
  return (
    <section>
      <h1>Sign in</h1>
      <div class="methods">
        <div class="card">
          <h2>Passkey</h2>
          <p>Use a passkey saved on this device or your phone.</p>
          <button type="button" disabled={busy} onClick={() => void byPasskey.run()}>
            Sign in with a passkey
          </button>
          {byPasskey.busy && <Progress label="Waiting for your passkey…" />}
          <ErrorMessage error={byPasskey.error} />
        </div>
        <WalletCard
          intro="Sign a Sign-In with Ethereum message with your browser wallet."
          label="Sign in with a crypto wallet"
          wallet={wallet}
          action={byWallet}
          busy={busy}
        />
        <FormCard
          title="Email and password"
          submit="Sign in"
          action={byPassword}
          busyLabel="Signing in…"
          disabled={busy}
        >
          <Field
            label="Email"
            type="email"
            name="email"
            autocomplete="username"
            required
            value={email}
            onValue={setEmail}
          />
          <Field
            label="Password"
            type="password"
            name="password"
            autocomplete="current-password"
            required
            value={password}
            onValue={setPassword}
          />
        </FormCard>
      </div>
      <p>
        No account yet? <a href={paths.signUp}>Sign up</a>.
      </p>
    </section>
  );
}
