import { RequireSignIn } from '../components/require-sign-in.js';

export function BalancePage() {
  return <RequireSignIn>{() => <h1>Balance</h1>}</RequireSignIn>;
}
