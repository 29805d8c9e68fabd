/**
 * A template's faces (docs/objects.md, "Templates": `{id, url, config, content}`), rendered safely:
 * an `https:` (or this site's) URL as an image, `content` as text (Preact escapes it: never HTML),
 * and nothing from `config` as markup or style (the CSP forbids inline styles anyway).
 */
export interface Face {
  id: string;
  url: string;
  config: Record<string, unknown>;
  content: string;
}

/** An address the CSP lets an <img> load (img-src 'self' https:), else null. */
export function imageUrl(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const u = new URL(url, window.location.origin);
    if (u.protocol === 'https:' || u.origin === window.location.origin) return u.href;
  } catch {
    // not a URL: shown as text
  }
  return null;
}

export function FaceView({ face, name }: { face: Face; name: string }) {
  const src = imageUrl(face.url);
  return (
    <figure class="face">
      {src ? (
        <img
          src={src}
          alt={`${name}: face ${face.id}`}
          loading="lazy"
          referrerpolicy="no-referrer"
        />
      ) : (
        face.url && <code>{face.url}</code>
      )}
      {face.content && <p class="face-content">{face.content.slice(0, 2000)}</p>}
      <figcaption>{face.id}</figcaption>
    </figure>
  );
}

export function Faces({ faces, name }: { faces: Face[]; name: string }) {
  if (faces.length === 0) return <span class="hint">no faces</span>;
  return (
    <div class="faces">
      {faces.map((f) => (
        <FaceView key={f.id} face={f} name={name} />
      ))}
    </div>
  );
}
