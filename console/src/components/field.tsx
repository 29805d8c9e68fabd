import type { ComponentChildren, PartialSelectHTMLAttributes } from 'preact';

/** The attributes a field's input takes (beyond its value). */
interface InputProps {
  type?: 'text' | 'email' | 'password' | 'number' | 'url';
  name?: string;
  required?: boolean;
  disabled?: boolean;
  minLength?: number;
  maxLength?: number;
  min?: number;
  max?: number;
  placeholder?: string;
  autocomplete?: string;
  inputMode?: 'numeric' | 'decimal';
  'aria-label'?: string;
  onBlur?: () => void;
}

/** A labelled text input (any input but a checkbox): `onValue` gets what was typed. */
export function Field({
  label,
  value,
  onValue,
  type,
  ...input
}: InputProps & {
  label: ComponentChildren;
  value: string;
  onValue: (value: string) => void;
}) {
  return (
    <label>
      {label}
      <input
        {...input}
        // Preact types an input by a literal type; this one is any of the text-like ones.
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
        type={type as 'text'}
        value={value}
        onInput={(e) => onValue(e.currentTarget.value)}
      />
    </label>
  );
}

/** An option: its value, or its value and the text shown. */
export type Option = string | readonly [value: string, text: string];

type SelectProps = Omit<
  PartialSelectHTMLAttributes<HTMLSelectElement>,
  'value' | 'onChange' | 'label' | 'role'
>;

/** A labelled select; `inline` keeps it on the line of its label (a filter). */
export function SelectField<V extends string>({
  label,
  value,
  onValue,
  options,
  inline = false,
  ...select
}: SelectProps & {
  label?: ComponentChildren;
  value: V;
  onValue: (value: V) => void;
  options: readonly Option[];
  inline?: boolean;
}) {
  const control = (
    <select {...select} value={value} onChange={(e) => onValue(e.currentTarget.value as V)}>
      {options.map((o) => {
        const [v, text] = typeof o === 'string' ? [o, o] : o;
        return (
          <option key={v} value={v}>
            {text}
          </option>
        );
      })}
    </select>
  );
  if (label === undefined) return control;
  return (
    <label class={inline ? 'inline' : undefined}>
      {label}
      {control}
    </label>
  );
}

/** A checkbox with its label after it. */
export function CheckField({
  label,
  checked,
  onChecked,
  inline = false,
  ...input
}: Pick<InputProps, 'name' | 'disabled' | 'aria-label'> & {
  label: ComponentChildren;
  checked: boolean;
  onChecked: (checked: boolean) => void;
  inline?: boolean;
}) {
  return (
    <label class={inline ? 'inline' : undefined}>
      <input
        {...input}
        type="checkbox"
        checked={checked}
        onChange={(e) => onChecked(e.currentTarget.checked)}
      />{' '}
      {label}
    </label>
  );
}
