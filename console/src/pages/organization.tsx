import { RequireSignIn } from '../components/require-sign-in.js';

export function OrganizationPage() {
  return <RequireSignIn>{() => <h1>Organization</h1>}</RequireSignIn>;
}
