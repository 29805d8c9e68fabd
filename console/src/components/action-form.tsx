import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { ActionSpec, ExecuteAnswer } from '@ons/sdk';
import { formatTokens } from '../lib/format.js';
import { useAction, useLoad } from '../lib/hooks.js';
import { ons } from '../lib/session.js';
import { injectedWallet } from '../lib/eip1193.js';
import { passkeySigner, walletSigner } from '../lib/signers.js';
import { ErrorMessage } from './error-message.js';
import { Progress } from './progress.js';

/**
 * One action signed in the browser and executed (issue 32 item 2): the fee quoted before
 * signing (and sent as `max_fee_wei`, so the service refuses rather than charge more), signed
 * with the signed-in wallet's passkey or an injected crypto wallet (its own or linked), and
 * the charge shown after. `spec` builds the action from the form's fields (`children`).
 */
export function ActionForm({
  label,
  submit,
  spec,
  onDone,
  children,
}: {
  label: string;
  submit: string;
  spec: () => ActionSpec;
  onDone: (answer: ExecuteAnswer, charged: string) => void;
  children?: ComponentChildren;
}) {
  const wallet = injectedWallet();
  const [by, setBy] = useState<'passkey' | 'wallet'>('passkey');
  const [stage, setStage] = useState('');
  const fee = useLoad(() => ons.GET('/public/network/fees'), []);
  const run = useAction(async () => {
    const action = spec();
    const quote = fee.data ?? (await ons.GET('/public/network/fees'));
    setStage(
      by === 'passkey'
        ? 'Waiting for your passkey to sign…'
        : 'Waiting for your crypto wallet to sign…',
    );
    const signer = by === 'passkey' || !wallet ? passkeySigner : await walletSigner(wallet);
    const signed = await ons.actions.sign({ ...action, signer, maxFeeWei: quote.total_fee_wei });
    setStage('Applying…');
    const answer = await ons.actions.execute(signed);
    onDone(answer, formatTokens(answer.action.fee_wei));
  });
  return (
    <form
      class="action-form"
      aria-label={label}
      onSubmit={(e) => {
        e.preventDefault();
        void run.run();
      }}
    >
      {children}
      <fieldset>
        <legend>Sign with</legend>
        <label class="inline">
          <input
            type="radio"
            name="signer"
            checked={by === 'passkey'}
            onChange={() => setBy('passkey')}
          />{' '}
          your passkey
        </label>
        <label class="inline">
          <input
            type="radio"
            name="signer"
            checked={by === 'wallet'}
            disabled={!wallet}
            onChange={() => setBy('wallet')}
          />{' '}
          your crypto wallet{!wallet && ' (no browser wallet found)'}
        </label>
      </fieldset>
      <p class="hint" data-testid="fee-quote">
        {fee.data
          ? `Fee: ${fee.data.total_fee} ${fee.data.token}, paid by your organization (quoted now; never more).`
          : 'Reading the fee…'}
      </p>
      <button type="submit" disabled={run.busy}>
        {submit}
      </button>
      {run.busy && <Progress label={stage} />}
      <ErrorMessage error={run.error ?? fee.error} />
    </form>
  );
}
