import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

/**
 * A secret the service shows only once (an API key, a webhook's signing key): the value, a
 * copy button, a plain warning, and "I have saved it" to put it away.
 */
export function SecretOnce({
  title,
  secret,
  testId,
  children,
  onDone,
}: {
  title: string;
  secret: string;
  testId: string;
  /** The warning: what it is and why it cannot be shown again. */
  children: ComponentChildren;
  onDone: () => void;
}) {
  const [copied, setCopied] = useState<string | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied('Copied to the clipboard.');
    } catch {
      setCopied('The browser did not allow copying: select the key and copy it yourself.');
    }
  };
  return (
    <div class="card" role="region" aria-label={title}>
      <h2>{title}</h2>
      <p class="warning">{children}</p>
      <div class="secret">
        <code data-testid={testId}>{secret}</code>
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
      </div>
      {copied && (
        <p class="hint" role="status">
          {copied}
        </p>
      )}
      <button type="button" class="secondary" onClick={onDone}>
        I have saved it
      </button>
    </div>
  );
}
