import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ErrorMessage } from '../components/error-message.js';
import { Progress } from '../components/progress.js';
import { formatDate } from '../lib/format.js';
import { useAction, useLoad } from '../lib/hooks.js';
import { ons } from '../lib/session.js';
import { isOrganizationId } from '../lib/sign-in.js';
import { paths } from '../paths.js';

/**
 * The page an invitation email links to (issue 32): it shows the organization, the role and
 * the email invited, and accepts only when "Accept the invitation" is pressed. Opening the
 * link changes nothing (a mail scanner that fetches it accepts nothing). No sign-in: the
 * token in the link is the proof, as it is for the API.
 */
export function InvitationPage() {
  const { query } = useLocation();
  const organizationId = query.organization_id ?? '';
  const memberId = query.member_id ?? '';
  const token = query.token ?? '';
  // The organization goes into the call's path: only an id is sent there (`..` would make
  // it another call, with the signed-in person's token).
  const complete = isOrganizationId(organizationId) && memberId !== '' && token !== '';
  const invitation = useLoad(
    () =>
      complete
        ? ons.GET('/organizations/{organizationId}/invitation', {
            params: { path: { organizationId }, query: { member_id: memberId, token } },
          })
        : Promise.resolve(null),
    [organizationId, memberId, token],
  );
  const [accepted, setAccepted] = useState<{ bound: boolean } | undefined>(undefined);
  const accept = useAction(async () => {
    const answer = await ons.POST('/organizations/{organizationId}/invite', {
      params: { path: { organizationId } },
      body: { member_id: memberId, token },
    });
    setAccepted({ bound: answer.member.wallet_id !== null });
  });
  const inv = invitation.data;
  return (
    <section>
      <h1>Invitation</h1>
      {!complete && (
        <p class="error" role="alert">
          This link is incomplete or damaged: open the whole link from the invitation email (it
          names the organization, the member and a token).
        </p>
      )}
      {invitation.loading && complete && <Progress label="Reading the invitation…" />}
      <ErrorMessage error={invitation.error} />
      {invitation.error !== null && (
        <p>
          An invitation can be accepted once, within 7 days. Ask the organization for a new one.
        </p>
      )}
      {inv && accepted === undefined && (
        <>
          <p>
            You are invited to join <strong>{inv.organization_name}</strong> as{' '}
            <strong>{inv.role}</strong>.
          </p>
          <dl class="facts">
            <dt>Organization</dt>
            <dd>{inv.organization_name}</dd>
            <dt>Role</dt>
            <dd>{inv.role}</dd>
            <dt>Invited email</dt>
            <dd>{inv.email}</dd>
            <dt>Open until</dt>
            <dd>{formatDate(inv.when_expires)}</dd>
          </dl>
          <button type="button" disabled={accept.busy} onClick={() => void accept.run()}>
            Accept the invitation
          </button>
        </>
      )}
      {inv && accepted && (
        <div class="notice" role="status">
          <p>
            Accepted: you are a member of <strong>{inv.organization_name}</strong> as{' '}
            <strong>{inv.role}</strong>.
          </p>
          {accepted.bound ? (
            <p>
              <a href={paths.signIn}>Sign in</a> with {inv.email} and choose this organization on
              the Organization page.
            </p>
          ) : (
            <p>
              No account has confirmed {inv.email} yet: <a href={paths.signUp}>sign up</a> (or sign
              in) with that email and confirm it with the code sent to it. You act as this member
              from then on; until then the members list shows you as invited.
            </p>
          )}
        </div>
      )}
      {accept.busy && <Progress label="Accepting…" />}
      <ErrorMessage error={accept.error} />
    </section>
  );
}
