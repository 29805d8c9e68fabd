import type { Action } from '../lib/hooks.js';
import type { Eip1193Provider } from '../lib/eip1193.js';
import { ErrorMessage } from './error-message.js';
import { Progress } from './progress.js';

/**
 * The crypto wallet's card of the sign-in and sign-up pages: its button, disabled with the
 * reason when the page has no browser wallet, progress while the wallet signs, and its error.
 */
export function WalletCard(props: {
  intro: string;
  label: string;
  wallet: Eip1193Provider | null;
  action: Action<[], void>;
  busy: boolean;
}) {
  const { wallet, action } = props;
  return (
    <div class="card">
      <h2>Crypto wallet</h2>
      <p>{props.intro}</p>
      <button
        type="button"
        disabled={props.busy || !wallet}
        aria-describedby={wallet ? undefined : 'no-wallet'}
        onClick={() => void action.run()}
      >
        {props.label}
      </button>
      {!wallet && (
        <p id="no-wallet" class="hint">
          No browser wallet was found on this page (install one such as MetaMask).
        </p>
      )}
      {action.busy && <Progress label="Waiting for your wallet's signature…" />}
      <ErrorMessage error={action.error} />
    </div>
  );
}
