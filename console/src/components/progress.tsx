/** Shown while something takes time: a spinner and what is happening. */
export function Progress({ label }: { label: string }) {
  return (
    <p class="progress" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" />
      {label}
    </p>
  );
}
