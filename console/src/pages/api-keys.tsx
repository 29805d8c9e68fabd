import { RequireSignIn } from '../components/require-sign-in.js';

export function ApiKeysPage() {
  return <RequireSignIn>{() => <h1>API keys</h1>}</RequireSignIn>;
}
