import { RequireSignIn } from '../components/require-sign-in.js';

export function MembersPage() {
  return <RequireSignIn>{() => <h1>Members</h1>}</RequireSignIn>;
}
