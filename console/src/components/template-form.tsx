import { useState } from 'preact/hooks';
import type { Answer } from '@ons/sdk';
import { checkCustomSchema } from '../lib/custom-schema.js';
import { useAction } from '../lib/hooks.js';
import { ons } from '../lib/session.js';
import { CheckField, Field } from './field.js';
import { FormCard } from './form-card.js';

export type TemplateRecordOf = Answer<'/templates/{id}', 'get'>;

const ACTIONS = ['mint', 'transfer', 'update', 'redeem', 'drop', 'pickup'] as const;
type ActionName = (typeof ACTIONS)[number];

interface FaceDraft {
  id: string;
  url: string;
  content: string;
}

/**
 * Create or edit a template: name, description, category, faces, allowed actions,
 * `custom_schema` (checked as it is typed) and public/private. `template` given: edits it
 * (PUT, which makes a new version when what chains hash changes).
 */
export function TemplateForm({
  template,
  onSaved,
}: {
  template?: TemplateRecordOf;
  onSaved: (id: string, created: boolean) => void;
}) {
  const [name, setName] = useState(template?.name ?? '');
  const [description, setDescription] = useState(template?.description ?? '');
  const [category, setCategory] = useState(template?.category ?? '');
  const [actions, setActions] = useState<Set<ActionName>>(
    new Set((template?.actions ?? ['mint', 'transfer', 'update', 'redeem']) as ActionName[]),
  );
  const [faces, setFaces] = useState<FaceDraft[]>(
    template?.faces.map((f) => ({ id: f.id, url: f.url, content: f.content })) ?? [
      { id: 'front', url: '', content: '' },
    ],
  );
  const [schema, setSchema] = useState(
    template?.custom_schema ? JSON.stringify(template.custom_schema, null, 2) : '',
  );
  const [isPublic, setIsPublic] = useState(template?.is_public ?? true);
  const check = checkCustomSchema(schema);
  const save = useAction(async () => {
    if (!check.ok) throw new Error(`custom_schema: ${check.message}`);
    const body = {
      name: name.trim(),
      description: description.trim(),
      category: category.trim(),
      faces: faces
        .filter((f) => f.id.trim() !== '')
        .map((f) => ({ id: f.id.trim(), url: f.url.trim(), content: f.content, config: {} })),
      actions: ACTIONS.filter((a) => actions.has(a)),
      custom_schema: check.value,
      is_public: isPublic,
    };
    if (template) {
      await ons.PUT('/templates/{id}', { params: { path: { id: template.id } }, body });
      onSaved(template.id, false);
    } else {
      const { id } = await ons.POST('/templates', { body });
      onSaved(id, true);
    }
  });
  const setFace = (i: number, patch: Partial<FaceDraft>) =>
    setFaces(faces.map((f, j) => (j === i ? { ...f, ...patch } : f)));
  return (
    <FormCard
      title={template ? `Edit ${template.name}` : 'New template'}
      label={template ? `Edit ${template.name}` : 'New template'}
      submit={template ? 'Save the template' : 'Create the template'}
      action={save}
      busyLabel="Saving…"
      disabled={!check.ok || name.trim() === ''}
    >
      <Field label="Name" name="name" required maxLength={200} value={name} onValue={setName} />
      <Field
        label="Description (optional)"
        name="description"
        maxLength={4000}
        value={description}
        onValue={setDescription}
      />
      <Field
        label="Category (optional)"
        name="category"
        maxLength={200}
        value={category}
        onValue={setCategory}
      />
      <fieldset>
        <legend>Actions its objects allow</legend>
        {ACTIONS.map((a) => (
          <CheckField
            key={a}
            inline
            label={a}
            checked={actions.has(a)}
            onChecked={(on) => {
              const next = new Set(actions);
              if (on) next.add(a);
              else next.delete(a);
              setActions(next);
            }}
          />
        ))}
      </fieldset>
      <fieldset>
        <legend>Faces (how its objects are shown)</legend>
        {faces.map((f, i) => (
          <div class="face-draft" key={i}>
            <Field
              label={`Face ${i + 1} id`}
              maxLength={64}
              value={f.id}
              onValue={(id) => setFace(i, { id })}
            />
            <Field
              label={`Face ${i + 1} image URL (https:, optional)`}
              type="url"
              maxLength={2048}
              value={f.url}
              onValue={(url) => setFace(i, { url })}
            />
            <Field
              label={`Face ${i + 1} text (optional)`}
              maxLength={65536}
              value={f.content}
              onValue={(content) => setFace(i, { content })}
            />
            <button
              type="button"
              class="secondary"
              onClick={() => setFaces(faces.filter((_, j) => j !== i))}
            >
              Remove face {i + 1}
            </button>
          </div>
        ))}
        {faces.length < 32 && (
          <button
            type="button"
            class="secondary"
            onClick={() => setFaces([...faces, { id: '', url: '', content: '' }])}
          >
            Add a face
          </button>
        )}
      </fieldset>
      <label>
        custom_schema: a JSON Schema for each object's <code>custom</code> (optional)
        <textarea
          name="custom_schema"
          rows={6}
          spellcheck={false}
          placeholder='{"type": "object", "properties": {"seat": {"type": "string"}}}'
          aria-invalid={!check.ok}
          aria-describedby="schema-check"
          value={schema}
          onInput={(e) => setSchema(e.currentTarget.value)}
        />
      </label>
      <p id="schema-check" class={check.ok ? 'hint' : 'error'} aria-live="polite">
        {check.ok
          ? check.value
            ? 'The schema is valid JSON; the service checks it compiles when you save.'
            : 'No schema: any custom object is accepted.'
          : check.message}
      </p>
      <CheckField
        inline
        label="Public (anyone can read its objects and verify their history)"
        checked={isPublic}
        onChecked={setIsPublic}
      />
    </FormCard>
  );
}
