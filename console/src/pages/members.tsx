import { useState } from 'preact/hooks';
import { ACTIONS, DataTable } from '../components/data-table.js';
import { Confirm, ConfirmButton } from '../components/confirm-button.js';
import { ErrorMessage } from '../components/error-message.js';
import { Field, SelectField } from '../components/field.js';
import { ActionStatus, FormCard } from '../components/form-card.js';
import { Progress } from '../components/progress.js';
import { RequireSignIn } from '../components/require-sign-in.js';
import { formatDate } from '../lib/format.js';
import { useAction, useLoad } from '../lib/hooks.js';
import { ROLES, type Role } from '../lib/permissions.js';
import { ons, usePermissions } from '../lib/session.js';

function InviteForm({
  organizationId,
  onInvited,
}: {
  organizationId: string;
  onInvited: () => void;
}) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('member');
  const [sentTo, setSentTo] = useState<string | null>(null);
  const invite = useAction(async () => {
    await ons.POST('/organizations/{organizationId}/members', {
      params: { path: { organizationId } },
      body: { email: email.trim(), role },
    });
    setSentTo(email.trim());
    setEmail('');
    onInvited();
  });
  return (
    <FormCard
      title="Invite someone"
      submit="Send invitation"
      action={invite}
      busyLabel="Sending the invitation…"
      notice={
        sentTo && `Invitation sent to ${sentTo}. It becomes a membership once they open its link.`
      }
    >
      <div class="row">
        <Field
          label="Email"
          type="email"
          name="invite-email"
          required
          value={email}
          onValue={setEmail}
        />
        <SelectField
          label="Role"
          name="invite-role"
          value={role}
          onValue={setRole}
          options={ROLES}
        />
      </div>
    </FormCard>
  );
}

/** What each role may do, said where a role is chosen (docs/permissions.md). */
const ROLE_MEANS: Record<Role, string> = {
  owner: 'An owner may do everything, delete the organization and change other owners.',
  admin: 'An admin may do everything but delete the organization or change owners.',
  member: 'A member reads, mints and acts on objects; no members, API keys or webhooks.',
  viewer: 'A viewer only reads objects, templates, the organization and its balance.',
};

/** A member's role: changed only once the person confirms the change. */
function RoleCell({
  who,
  role,
  busy,
  onChange,
}: {
  who: string;
  role: Role;
  busy: boolean;
  onChange: (role: Role) => Promise<unknown>;
}) {
  const [next, setNext] = useState<Role | null>(null);
  const [asking, setAsking] = useState(false);
  return (
    <>
      <SelectField
        aria-label={`Role of ${who}`}
        value={next ?? role}
        disabled={busy || next !== null}
        onValue={(r) => {
          if (r === role) return;
          setNext(r);
          setAsking(true);
        }}
        options={ROLES}
      />
      {asking && next && (
        <Confirm
          question={`Change the role of ${who} from ${role} to ${next}? ${ROLE_MEANS[next]}`}
          confirm="Change the role"
          onConfirm={() => {
            setAsking(false);
            void onChange(next).finally(() => setNext(null));
          }}
          onCancel={() => {
            setAsking(false);
            setNext(null);
          }}
        />
      )}
    </>
  );
}

function Members({ organizationId }: { organizationId: string }) {
  const held = usePermissions();
  const list = useLoad(
    () =>
      ons.GET('/organizations/{organizationId}/members', {
        params: { path: { organizationId }, query: { limit: 100 } },
      }),
    [organizationId],
  );
  const changeRole = useAction(
    async (memberId: string, role: Role, _who: string) => {
      await ons.PATCH('/organizations/{organizationId}/members/{memberId}', {
        params: { path: { organizationId, memberId } },
        body: { role },
      });
      list.reload();
    },
    (_id, role, who) => `${who} is now ${role}.`,
  );
  const remove = useAction(
    async (memberId: string, _who: string) => {
      await ons.DELETE('/organizations/{organizationId}/members/{memberId}', {
        params: { path: { organizationId, memberId } },
      });
      list.reload();
    },
    (_id, who) => `${who} is removed from the organization.`,
  );
  return (
    <>
      {list.loading && <Progress label="Loading members…" />}
      <ErrorMessage error={list.error ?? changeRole.error ?? remove.error} />
      <ActionStatus action={changeRole} busyLabel="Changing the role…" />
      <ActionStatus action={remove} busyLabel="Removing…" />
      <DataTable
        columns={['Member', 'Status', 'Role', 'Since', ACTIONS]}
        rows={list.data?.members}
        rowKey={(m) => m.id}
        cells={(m) => {
          const who = m.name ?? m.email ?? m.wallet_id ?? m.id;
          return [
            <>
              {who}
              {m.name && m.email && <div class="hint">{m.email}</div>}
            </>,
            m.status,
            held.has('members.update') ? (
              <RoleCell
                who={who}
                role={m.role}
                busy={changeRole.busy}
                onChange={(role) => changeRole.run(m.id, role, who)}
              />
            ) : (
              m.role
            ),
            formatDate(m.when_created),
            held.has('members.delete') && (
              <ConfirmButton
                label={`Remove ${who}`}
                question={`Remove ${who} from the organization? It can no longer act in it, and the API keys it made stop working.`}
                confirm="Remove the member"
                disabled={remove.busy}
                onConfirm={() => void remove.run(m.id, who)}
              >
                Remove
              </ConfirmButton>
            ),
          ];
        }}
      />
      {held.has('members.create') && (
        <InviteForm organizationId={organizationId} onInvited={list.reload} />
      )}
    </>
  );
}

/** Members with their roles, invitations, role changes and removals (as the API allows). */
export function MembersPage() {
  return (
    <RequireSignIn organization>
      {(claims) => (
        <section>
          <h1>Members</h1>
          <Members organizationId={claims.organizationId!} />
        </section>
      )}
    </RequireSignIn>
  );
}
