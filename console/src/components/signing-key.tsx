import type { ComponentChildren } from 'preact';
import { SecretOnce } from './secret-once.js';

/** A webhook's signing key, shown once (after create and after rotate-key). */
export function SigningKey({
  signingKey,
  onDone,
  children,
}: {
  signingKey: string;
  onDone: () => void;
  children?: ComponentChildren;
}) {
  return (
    <>
      <SecretOnce
        title="The webhook's signing key"
        secret={signingKey}
        testId="webhook-signing-key"
        onDone={onDone}
      >
        Copy this signing key now and keep it with your endpoint: it checks that a delivery came
        from this service. It is shown only this once and cannot be shown again; if you lose it,
        rotate the key.
      </SecretOnce>
      {children}
    </>
  );
}
