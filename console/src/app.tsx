import { LocationProvider, Route, Router } from 'preact-iso';
import { Layout } from './components/layout.js';
import { ApiKeysPage } from './pages/api-keys.js';
import { BalancePage } from './pages/balance.js';
import { ExplorerBatchPage } from './pages/explorer-batch.js';
import { ExplorerObjectPage } from './pages/explorer-object.js';
import { ExplorerPage } from './pages/explorer.js';
import { WebhookPage } from './pages/webhook.js';
import { WebhooksPage } from './pages/webhooks.js';
import { ObjectsPage } from './pages/objects.js';
import { ObjectPage } from './pages/object.js';
import { HomePage } from './pages/home.js';
import { InvitationPage } from './pages/invitation.js';
import { MembersPage } from './pages/members.js';
import { NotFoundPage } from './pages/not-found.js';
import { OrganizationPage } from './pages/organization.js';
import { PoliciesPage } from './pages/policies.js';
import { SessionsPage } from './pages/sessions.js';
import { SignInPage } from './pages/sign-in.js';
import { SignUpPage } from './pages/sign-up.js';
import { TemplatesPage } from './pages/templates.js';
import { BASE, paths } from './paths.js';

/** The console: one layout, one route per page (add a page here and in paths.ts). */
export function App() {
  return (
    <LocationProvider scope={BASE}>
      <Layout>
        <Router>
          <Route path={paths.home} component={HomePage} />
          <Route path={BASE} component={HomePage} />
          <Route path={paths.signIn} component={SignInPage} />
          <Route path={paths.signUp} component={SignUpPage} />
          <Route path={paths.sessions} component={SessionsPage} />
          <Route path={paths.organization} component={OrganizationPage} />
          <Route path={paths.members} component={MembersPage} />
          <Route path={paths.balance} component={BalancePage} />
          <Route path={paths.apiKeys} component={ApiKeysPage} />
          <Route path={paths.policies} component={PoliciesPage} />
          <Route path={paths.templates} component={TemplatesPage} />
          <Route path={paths.objects} component={ObjectsPage} />
          <Route path={paths.object} component={ObjectPage} />
          <Route path={paths.webhooks} component={WebhooksPage} />
          <Route path={paths.webhook} component={WebhookPage} />
          <Route path={paths.invitation} component={InvitationPage} />
          <Route path={paths.explorer} component={ExplorerPage} />
          <Route path={paths.explorerBatch} component={ExplorerBatchPage} />
          <Route path={paths.explorerObject} component={ExplorerObjectPage} />
          <Route default component={NotFoundPage} />
        </Router>
      </Layout>
    </LocationProvider>
  );
}
