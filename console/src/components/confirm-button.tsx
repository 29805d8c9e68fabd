import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * A question asked before something that cannot be undone (a delete, a removal, a role
 * change): what will happen, the button that does it, and Cancel (focused, so Enter or a
 * second click does not confirm by accident).
 */
export function Confirm({
  question,
  confirm,
  onConfirm,
  onCancel,
}: {
  question: ComponentChildren;
  /** The confirming button's text, saying what it does ("Delete the key"). */
  confirm: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => cancel.current?.focus(), []);
  return (
    <div class="confirm" role="group" aria-label="Please confirm">
      <p>{question}</p>
      <button type="button" class="danger" onClick={onConfirm}>
        {confirm}
      </button>
      <button type="button" class="secondary" ref={cancel} onClick={onCancel}>
        Cancel
      </button>
    </div>
  );
}

/** A button whose action runs only once the person confirms it (see `Confirm`). */
export function ConfirmButton({
  children,
  label,
  question,
  confirm,
  onConfirm,
  disabled = false,
  variant = 'danger',
}: {
  children: ComponentChildren;
  /** The button's accessible name, when its text is not enough ("Delete CI reader"). */
  label?: string;
  question: ComponentChildren;
  confirm: string;
  onConfirm: () => void;
  disabled?: boolean;
  variant?: 'danger' | 'secondary';
}) {
  const [asking, setAsking] = useState(false);
  if (asking) {
    return (
      <Confirm
        question={question}
        confirm={confirm}
        onConfirm={() => {
          setAsking(false);
          onConfirm();
        }}
        onCancel={() => setAsking(false)}
      />
    );
  }
  return (
    <button
      type="button"
      class={variant}
      disabled={disabled}
      aria-label={label}
      onClick={() => setAsking(true)}
    >
      {children}
    </button>
  );
}
