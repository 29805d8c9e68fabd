import { useState } from 'preact/hooks';
import { ErrorMessage } from '../components/error-message.js';
import { Progress } from '../components/progress.js';
import { RequireSignIn } from '../components/require-sign-in.js';
import { formatDate } from '../lib/format.js';
import { useAction, useLoad } from '../lib/hooks.js';
import { ons } from '../lib/session.js';

const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
type Role = (typeof ROLES)[number];

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
    <form
      class="card"
      onSubmit={(e) => {
        e.preventDefault();
        void invite.run();
      }}
    >
      <h2>Invite someone</h2>
      <div class="row">
        <label>
          Email
          <input
            type="email"
            name="invite-email"
            required
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </label>
        <label>
          Role
          <select
            name="invite-role"
            value={role}
            onChange={(e) => setRole(e.currentTarget.value as Role)}
          >
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
      </div>
      <button type="submit" disabled={invite.busy}>
        Send invitation
      </button>
      {invite.busy && <Progress label="Sending the invitation…" />}
      {sentTo && !invite.busy && !invite.error && (
        <p class="notice" role="status">
          Invitation sent to {sentTo}. It becomes a membership once they open its link.
        </p>
      )}
      <ErrorMessage error={invite.error} />
    </form>
  );
}

function Members({ organizationId }: { organizationId: string }) {
  const list = useLoad(
    () =>
      ons.GET('/organizations/{organizationId}/members', {
        params: { path: { organizationId }, query: { limit: 100 } },
      }),
    [organizationId],
  );
  const changeRole = useAction(async (memberId: string, role: Role) => {
    await ons.PATCH('/organizations/{organizationId}/members/{memberId}', {
      params: { path: { organizationId, memberId } },
      body: { role },
    });
    list.reload();
  });
  const remove = useAction(async (memberId: string) => {
    await ons.DELETE('/organizations/{organizationId}/members/{memberId}', {
      params: { path: { organizationId, memberId } },
    });
    list.reload();
  });
  const members = list.data?.members ?? [];
  return (
    <>
      {list.loading && <Progress label="Loading members…" />}
      <ErrorMessage error={list.error ?? changeRole.error ?? remove.error} />
      {(changeRole.busy || remove.busy) && <Progress label="Saving…" />}
      {list.data && (
        <table>
          <thead>
            <tr>
              <th scope="col">Member</th>
              <th scope="col">Status</th>
              <th scope="col">Role</th>
              <th scope="col">Since</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {members.map((m) => {
              const who = m.name ?? m.email ?? m.wallet_id ?? m.id;
              return (
                <tr key={m.id}>
                  <td>
                    {who}
                    {m.name && m.email && <div class="hint">{m.email}</div>}
                  </td>
                  <td>{m.status}</td>
                  <td>
                    <select
                      aria-label={`Role of ${who}`}
                      value={m.role}
                      disabled={changeRole.busy}
                      onChange={(e) => void changeRole.run(m.id, e.currentTarget.value as Role)}
                    >
                      {ROLES.map((r) => (
                        <option key={r} value={r}>
                          {r}
                        </option>
                      ))}
                    </select>
                  </td>
                  <td>{formatDate(m.when_created)}</td>
                  <td>
                    <button
                      type="button"
                      class="danger"
                      disabled={remove.busy}
                      aria-label={`Remove ${who}`}
                      onClick={() => void remove.run(m.id)}
                    >
                      Remove
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <InviteForm organizationId={organizationId} onInvited={list.reload} />
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
