/** A template's name as a list shows it: its id, category and whether it is public below. */
export function TemplateName({
  t,
}: {
  t: { id: string; name: string; category: string; is_public: boolean };
}) {
  return (
    <>
      {t.name}
      <div class="hint">
        <code>{t.id}</code>
        <br />
        {t.category || 'no category'} · {t.is_public ? 'public' : 'private'}
      </div>
    </>
  );
}
