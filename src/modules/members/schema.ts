import { Type, type Static } from 'typebox';
import { ListEnvelope, listQueryProperties } from '../../lib/list.js';
import { RoleName } from '../organizations/index.js';
import { IdParam } from '../../lib/ids.js';

export const MemberStatus = Type.Union(
  [Type.Literal('invited'), Type.Literal('active'), Type.Literal('removed')],
  { description: 'invitation status; removed members are listed only under `removed`' },
);

export const Member = Type.Object({
  id: Type.String(),
  wallet_id: Type.Union([Type.String(), Type.Null()]),
  email: Type.Union([Type.String(), Type.Null()]),
  name: Type.Union([Type.String(), Type.Null()]),
  role: RoleName,
  status: MemberStatus,
  when_created: Type.String({ format: 'date-time' }),
  when_modified: Type.String({ format: 'date-time' }),
});
export type Member = Static<typeof Member>;

export const MemberList = ListEnvelope('members', Member);

export const ListMembersQuery = Type.Object({
  ...listQueryProperties,
  status: Type.Optional(MemberStatus),
});
export type ListMembersQuery = Static<typeof ListMembersQuery>;

export const InviteMemberInput = Type.Object(
  {
    email: Type.String({ format: 'email', minLength: 3, maxLength: 254 }),
    role: RoleName,
  },
  { additionalProperties: false },
);
export type InviteMemberInput = Static<typeof InviteMemberInput>;

export const UpdateMemberInput = Type.Object({ role: RoleName }, { additionalProperties: false });
export type UpdateMemberInput = Static<typeof UpdateMemberInput>;

export const MemberPath = Type.Object({
  organizationId: IdParam('organization'),
  memberId: IdParam('member'),
});

export const ConfirmInviteQuery = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 256, description: 'the invitation token' }),
  member_id: Type.String({ minLength: 1, maxLength: 64 }),
});
export type ConfirmInviteQuery = Static<typeof ConfirmInviteQuery>;

export const InviteConfirmation = Type.Object({
  organization_id: Type.String(),
  member: Member,
});
export type InviteConfirmation = Static<typeof InviteConfirmation>;

/** What an invitation offers, read with its token (changes nothing). */
export const InvitePreview = Type.Object({
  organization_id: Type.String(),
  organization_name: Type.String(),
  member_id: Type.String(),
  email: Type.String(),
  role: RoleName,
  when_expires: Type.String({ format: 'date-time' }),
});
export type InvitePreview = Static<typeof InvitePreview>;

/** `POST /organizations/{id}/invite`: the same token and member id, in the body. */
export const ConfirmInviteBody = Type.Object(
  {
    token: ConfirmInviteQuery.properties.token,
    member_id: ConfirmInviteQuery.properties.member_id,
  },
  { additionalProperties: false },
);
