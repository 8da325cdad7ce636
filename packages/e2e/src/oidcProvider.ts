import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type Configuration } from 'oidc-provider';

/** An account of the test provider (its login is the account id): the e-mail it releases, verified. */
export type ProviderAccounts = Record<string, { email: string }>;

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** How many logouts (RP-initiated) the provider completed. */
  logouts: () => number;
  close: () => Promise<void>;
}

/**
 * A real OpenID Connect provider (oidc-provider 9) on a random loopback port, for the single
 * sign-on test: one confidential client (client_secret_basic, code flow, PKCE required) whose
 * redirect URI is `appUrl`'s callback and post-logout redirect `appUrl`/login; the development
 * login form (the login is the account id, any password); consent granted for this first-party
 * client; RP-initiated logout (the provider's 'sign out?' page).
 */
export async function startTestProvider(appUrl: string, accounts: ProviderAccounts): Promise<TestProvider> {
  const started: { provider?: Provider } = {};
  let logouts = 0;
  const server: Server = createServer((req, res) => {
    if (started.provider) void started.provider.callback()(req, res);
    else res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'lamina-e2e';
  const clientSecret = 'lamina-e2e-client-secret-0123456789';
  const configuration: Configuration = {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [`${appUrl}/api/auth/oidc/callback`],
        post_logout_redirect_uris: [`${appUrl}/login`],
        token_endpoint_auth_method: 'client_secret_basic',
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    pkce: { required: () => true },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    cookies: { keys: ['lamina-e2e-provider-cookie-key'] },
    features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
    findAccount: (_ctx, id) => {
      const account = accounts[id];
      if (!account) return undefined;
      return { accountId: id, claims: () => ({ sub: id, name: id, email: account.email, email_verified: true }) };
    },
    loadExistingGrant: async (ctx) => {
      const session = ctx.oidc.session;
      const client = ctx.oidc.client;
      if (!session?.accountId || !client) return undefined;
      const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
  };
  const provider = new Provider(issuer, configuration);
  started.provider = provider;
  provider.on('end_session.success', () => {
    logouts += 1;
  });
  return {
    issuer,
    clientId,
    clientSecret,
    logouts: () => logouts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
