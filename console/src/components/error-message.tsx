import { isOnsError } from '@ons/sdk';

/**
 * What a person reads for a failure: the service's own message (the SDK's OnsError), the
 * browser's for a cancelled passkey or wallet prompt, never raw JSON or a stack.
 */
export function messageOf(error: unknown): string {
  if (isOnsError(error)) {
    if (error.status === 0) {
      return 'The service did not answer. Check your connection and try again.';
    }
    // An answer that is not the service's error body (a proxy's page): its status, not its markup.
    if (!error.message || /^HTTP \d{3}\b/.test(error.message)) {
      return `The service could not answer the request (HTTP ${error.status}). Try again later.`;
    }
    return error.message;
  }
  if (error instanceof DOMException && error.name === 'NotAllowedError') {
    return 'The request was cancelled or timed out in the browser.';
  }
  if (error instanceof Error && error.message) return error.message;
  if (typeof error === 'object' && error !== null && 'message' in error) {
    const m = error.message;
    if (typeof m === 'string' && m) return m;
  }
  return 'Something went wrong.';
}

function fieldsOf(error: unknown): { field: string; reason: string }[] {
  if (!isOnsError(error)) return [];
  const fields = error.details?.fields;
  return Array.isArray(fields) ? fields.slice(0, 10) : [];
}

/** The one way an error is shown: its message, and for a refused input each field's reason. */
export function ErrorMessage({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  const fields = fieldsOf(error);
  return (
    <div class="error" role="alert">
      <p>{messageOf(error)}</p>
      {fields.length > 0 && (
        <ul>
          {fields.map((f) => (
            <li key={f.field}>
              <code>{f.field}</code>: {f.reason}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
