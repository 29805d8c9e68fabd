import { useState } from 'preact/hooks';
import { useAction } from '../lib/hooks.js';
import { ons } from '../lib/session.js';
import { passkeySigner as passkey } from '../lib/signers.js';
import { ErrorMessage } from './error-message.js';
import { Progress } from './progress.js';

/** Transfers an object to another address: signed with the passkey, then executed. */
export function TransferForm({
  objectId,
  name,
  onDone,
}: {
  objectId: string;
  name: string;
  onDone: (to: string) => void;
}) {
  const [to, setTo] = useState('');
  const [stage, setStage] = useState('');
  const transfer = useAction(async () => {
    const address = to.trim().toLowerCase();
    setStage('Waiting for your passkey to sign the transfer…');
    const signed = await ons.actions.sign({
      name: 'transfer',
      params: { object_id: objectId, to: address },
      signer: passkey,
    });
    setStage('Transferring…');
    await ons.actions.execute(signed);
    setTo('');
    onDone(address);
  });
  return (
    <form
      class="transfer"
      aria-label={`Transfer ${name}`}
      onSubmit={(e) => {
        e.preventDefault();
        void transfer.run();
      }}
    >
      <label>
        New owner’s address (0x…)
        <input
          name="transfer-to"
          required
          maxLength={42}
          autoComplete="off"
          value={to}
          onInput={(e) => setTo(e.currentTarget.value)}
        />
      </label>
      <button type="submit" disabled={transfer.busy}>
        Sign with your passkey and transfer
      </button>
      {transfer.busy && <Progress label={stage} />}
      <ErrorMessage error={transfer.error} />
    </form>
  );
}
