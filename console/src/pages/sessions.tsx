import { RequireSignIn } from '../components/require-sign-in.js';

export function SessionsPage() {
  return <RequireSignIn>{() => <h1>Sessions</h1>}</RequireSignIn>;
}
