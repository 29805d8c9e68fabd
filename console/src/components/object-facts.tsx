import type { PublicObject } from '@ons/sdk';
import { formatDate } from '../lib/format.js';
import { fieldLabel } from '../lib/labels.js';
import { imageUrl } from './faces.js';

/**
 * An object's fields (docs/objects.md, "The object record") as a definition list; custom data as
 * JSON text.
 */
export function ObjectFacts({ o }: { o: PublicObject }) {
  const image = imageUrl(o.metadata.image?.url);
  return (
    <>
      {image && (
        <img class="object-image" src={image} alt={o.metadata.image?.name || o.metadata.name} />
      )}
      <dl class="facts wrap">
        <dt>Name</dt>
        <dd>{o.metadata.name || '—'}</dd>
        <dt>Description</dt>
        <dd>{o.metadata.description || '—'}</dd>
        <dt>Category</dt>
        <dd>{o.metadata.category || '—'}</dd>
        <dt>Owner</dt>
        <dd>
          <code data-testid="object-owner">{o.owner}</code>
        </dd>
        <dt>Template</dt>
        <dd>
          <code>{o.template_id}</code>
        </dd>
        <dt>Location</dt>
        <dd>
          {o.location
            ? `${o.location.latitude}, ${o.location.longitude} (${o.location.geo_hash})`
            : '—'}
        </dd>
        <dt>Custom</dt>
        <dd>
          <code>{JSON.stringify(o.custom)}</code>
        </dd>
        <dt>Nonce / version</dt>
        <dd>
          {o.nonce} / {o.version}
        </dd>
        <dt title="integrity_hash">{fieldLabel('integrity_hash')}</dt>
        <dd>
          <code>{o.integrity_hash}</code>
        </dd>
        <dt title="prev_integrity_hash">{fieldLabel('prev_integrity_hash')}</dt>
        <dd>
          <code>{o.prev_integrity_hash}</code>
        </dd>
        <dt>Created / modified</dt>
        <dd>
          {formatDate(o.when_created)} / {formatDate(o.when_modified)}
        </dd>
      </dl>
    </>
  );
}
