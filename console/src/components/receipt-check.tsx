import type { ReceiptResult } from '@ons/sdk';
import { useState } from 'preact/hooks';
import { useAction } from '../lib/hooks.js';
import { checkReceipt } from '../lib/log.js';
import { ErrorMessage } from './error-message.js';

/**
 * "Verify receipt" on one action: fetches its receipt and checks it in the browser with the
 * SDK's verifyReceipt (the action's hash, its inclusion proof to the signed checkpoint, the
 * log's signature and the witnesses' cosignatures). `asMember`: fetched with the signed-in
 * session (an action of the organization's own objects, private ones included).
 */
export function ReceiptCheck({
  actionId,
  asMember = false,
}: {
  actionId: string;
  asMember?: boolean;
}) {
  const [result, setResult] = useState<ReceiptResult | null>(null);
  const run = useAction(async () => {
    setResult(null);
    setResult((await checkReceipt(actionId, asMember)).result);
  });
  return (
    <div data-testid={`receipt-${actionId}`}>
      <button type="button" class="secondary" disabled={run.busy} onClick={() => void run.run()}>
        Verify receipt
      </button>
      <ErrorMessage error={run.error} />
      {result && (
        <p class={result.ok ? 'notice' : 'error'} role="status">
          {result.ok
            ? `Verified: in the log of ${String(result.checkpoint?.size)} actions, with ` +
              `${result.cosignatures.length} witness cosignature(s)`
            : result.errors.length > 0
              ? `Not verified: ${result.errors.join('; ')}`
              : `Not verified: its leaf is in the log, but nothing here ties this action to it ` +
                `(not checked: ${result.skipped.join(', ')})`}
        </p>
      )}
    </div>
  );
}
