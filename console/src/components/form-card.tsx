import type { ComponentChildren } from 'preact';
import { ErrorMessage } from './error-message.js';
import { Progress } from './progress.js';

/** A success notice (a polite live region): what was just done. */
export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <p class="notice" role="status">
      {children}
    </p>
  );
}

/** An action's progress while it runs and its success notice after (its error is the page's). */
export function ActionStatus({
  action,
  busyLabel,
}: {
  action: { busy: boolean; notice: string | null };
  busyLabel: string;
}) {
  return (
    <>
      {action.busy && <Progress label={busyLabel} />}
      {action.notice && <Notice>{action.notice}</Notice>}
    </>
  );
}

/** What a form runs on submit (a `useAction` without arguments). */
export interface SubmitAction {
  run: () => Promise<unknown>;
  busy: boolean;
  error: unknown;
  notice?: string | null;
}

/**
 * The console's one form: a card with its heading, its fields (`children`), the submit
 * button (disabled while it runs), progress, the success notice and the error.
 */
export function FormCard({
  title,
  label,
  submit,
  action,
  busyLabel,
  disabled = false,
  notice,
  extra,
  children,
}: {
  title?: ComponentChildren;
  /** The form's accessible name, when the heading is not enough. */
  label?: string;
  submit: ComponentChildren;
  action: SubmitAction;
  busyLabel: string;
  /** The submit button is disabled (another form of the page runs, the input is not valid). */
  disabled?: boolean;
  /** Shown once the last submit succeeded (else the action's own notice). */
  notice?: ComponentChildren;
  /** Buttons after the submit button (Cancel). */
  extra?: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <form
      class="card"
      aria-label={label}
      onSubmit={(e) => {
        e.preventDefault();
        void action.run();
      }}
    >
      {title !== undefined && <h2>{title}</h2>}
      {children}
      <button type="submit" disabled={action.busy || disabled}>
        {submit}
      </button>
      {extra}
      {action.busy && <Progress label={busyLabel} />}
      {(notice || action.notice) && !action.busy && !action.error && (
        <Notice>{notice || action.notice}</Notice>
      )}
      <ErrorMessage error={action.error} />
    </form>
  );
}
