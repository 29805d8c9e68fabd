import { useLoad, type Loaded } from '../lib/hooks.js';
import { ons } from '../lib/session.js';
import { paths } from '../paths.js';
import { ErrorMessage } from './error-message.js';

/** A list call that answers whether there is at least one item (null when it may not read). */
const any = async (
  load: () => Promise<{ has_more: boolean } & Record<string, unknown>>,
  key: string,
) => {
  try {
    const page = await load();
    return (page[key] as unknown[]).length > 0;
  } catch {
    return null;
  }
};

/** What the overview knows of the organization: each `null` when the caller's role may not read it. */
export interface DashboardFacts {
  balance: { balance: string; balance_wei: string } | null;
  fee: { total_fee: string; total_fee_wei: string };
  templates: boolean | null;
  objects: boolean | null;
  webhooks: boolean | null;
  keys: boolean | null;
}

/** Loads the facts the checklist ticks from (null without an organization). */
export function useDashboardFacts(organizationId: string | null): Loaded<DashboardFacts | null> {
  return useLoad(async () => {
    if (!organizationId) return null;
    const [balance, fee, templates, objects, webhooks, keys] = await Promise.all([
      ons
        .GET('/organizations/{organizationId}/balance', { params: { path: { organizationId } } })
        .catch(() => null),
      ons.GET('/public/network/fees'),
      any(() => ons.GET('/templates', { params: { query: { limit: 1 } } }), 'templates'),
      any(() => ons.GET('/objects', { params: { query: { limit: 1 } } }), 'objects'),
      any(() => ons.GET('/webhooks', { params: { query: { limit: 1 } } }), 'webhooks'),
      any(() => ons.GET('/api-keys', { params: { query: { limit: 1 } } }), 'keys'),
    ]);
    return { balance, fee, templates, objects, webhooks, keys };
  }, [organizationId]);
}

/** The balance and how many actions it pays for at today's fee; what to do when it is empty. */
export function DashboardBalance({
  organizationId,
  facts,
}: {
  organizationId: string | null;
  facts: Loaded<DashboardFacts | null>;
}) {
  const d = facts.data;
  if (!organizationId) {
    return (
      <p data-testid="balance-summary">
        No organization yet, so no balance: <a href={paths.organization}>create one</a>, then
        deposit ONS to it to pay for actions.
      </p>
    );
  }
  if (!d) return null;
  if (!d.balance) {
    return <p data-testid="balance-summary">Your role cannot see the balance.</p>;
  }
  const actions = BigInt(d.balance.balance_wei) / BigInt(d.fee.total_fee_wei || '1');
  return (
    <p data-testid="balance-summary">
      Balance: <strong>{d.balance.balance} ONS</strong>, enough for {actions.toString()} actions at
      today’s fee ({d.fee.total_fee} ONS each).
      {actions === 0n && (
        <>
          {' '}
          Every action needs a fee: deposit ONS to your organization (
          <a href={paths.balance}>see Balance for its address and deposits</a>).
        </>
      )}
    </p>
  );
}

/**
 * Getting started (issue 32 item 3): organization → funds → template → first object →
 * webhook → API key, each ticked from what the service answers, each open step linking to
 * where it is done.
 */
export function DashboardChecklist({
  organizationId,
  facts,
}: {
  organizationId: string | null;
  facts: Loaded<DashboardFacts | null>;
}) {
  const d = facts.data;
  const funded = d?.balance ? BigInt(d.balance.balance_wei) > 0n : null;
  const steps: { label: string; done: boolean | null; href: string; todo: string }[] = [
    {
      label: 'An organization',
      done: organizationId !== null,
      href: paths.organization,
      todo: 'create one',
    },
    {
      label: 'Funds for fees',
      done: funded,
      href: paths.balance,
      todo: 'deposit to your organization',
    },
    { label: 'A template', done: d?.templates ?? null, href: paths.templates, todo: 'create one' },
    { label: 'A first object', done: d?.objects ?? null, href: paths.objects, todo: 'mint one' },
    { label: 'A webhook', done: d?.webhooks ?? null, href: paths.webhooks, todo: 'add one' },
    { label: 'An API key', done: d?.keys ?? null, href: paths.apiKeys, todo: 'create one' },
  ];
  const left = steps.filter((s) => !s.done).length;
  return (
    <>
      <h2>Getting started</h2>
      <ErrorMessage error={facts.error} />
      <ol class="checklist" data-testid="checklist">
        {steps.map((s) => (
          <li key={s.label} class={s.done ? 'done' : ''}>
            {s.done ? '✓ ' : '○ '}
            {s.label}
            {s.done === false && (
              <>
                {' — '}
                <a href={s.href}>{s.todo}</a>
              </>
            )}
            {s.done === null &&
              organizationId !== null &&
              !facts.loading &&
              ' — your role cannot see this'}
          </li>
        ))}
      </ol>
      {!facts.loading && left === 0 && (
        <p class="hint" data-testid="checklist-done">
          All set: your organization mints, pushes its actions to your server and has a key for your
          backend.
        </p>
      )}
    </>
  );
}
