import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type Configuration } from 'oidc-provider';

/** An account of the test provider: its login (the account id) and the e-mail claims it releases. */
export interface TestAccount {
  email: string | null;
  emailVerified: boolean;
}

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The provider's own record of how many logouts it completed. */
  logouts: () => number;
  close: () => Promise<void>;
}

/**
 * A real OpenID Connect provider (oidc-provider 9) on a random loopback port: one confidential
 * client (client_secret_basic, code flow, PKCE required) whose redirect URI is `appUrl`'s callback
 * and whose post-logout redirect is `appUrl`/login; the development login form (any password;
 * the login is the account id); consent granted for the first-party client; RP-initiated logout.
 * E-mail claims come from UserInfo (the ID token has only sub, as oidc-provider conforms it).
 */
export async function startTestProvider(
  appUrl: string,
  accounts: Record<string, TestAccount>,
  options: { authMethod?: 'client_secret_basic' | 'client_secret_post' } = {},
): Promise<TestProvider> {
  const started: { provider?: Provider } = {};
  let logouts = 0;
  const server: Server = createServer((req, res) => {
    if (started.provider) void started.provider.callback()(req, res);
    else res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'lamina';
  const clientSecret = 'lamina-test-client-secret-0123456789';
  const configuration: Configuration = {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [`${appUrl}/api/auth/oidc/callback`],
        post_logout_redirect_uris: [`${appUrl}/login`],
        token_endpoint_auth_method: options.authMethod ?? 'client_secret_basic',
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    pkce: { required: () => true },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    cookies: { keys: ['lamina-test-provider-cookie-key'] },
    features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
    findAccount: (_ctx, id) => {
      const account = accounts[id];
      if (!account) return undefined;
      return {
        accountId: id,
        claims: () => ({
          sub: id,
          name: id,
          ...(account.email === null ? {} : { email: account.email, email_verified: account.emailVerified }),
        }),
      };
    },
    // A first-party client: the user is not asked to consent.
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

/** A browser's cookie jar for one host (name → value), fed by each response's Set-Cookie. */
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  store(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const pair = line.split(';', 1)[0] ?? '';
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/** One request to the provider as a browser makes it (cookies, no automatic redirects). */
async function browse(jar: CookieJar, url: string, form?: Record<string, string>): Promise<Response> {
  const response = await fetch(url, {
    method: form ? 'POST' : 'GET',
    redirect: 'manual',
    headers: {
      cookie: jar.header(),
      ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
    },
    ...(form ? { body: new URLSearchParams(form).toString() } : {}),
  });
  jar.store(response);
  return response;
}

function formAction(html: string, base: string): string {
  const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
  if (!action) throw new Error(`no form in the provider's page: ${html.slice(0, 300)}`);
  return new URL(action.replace(/&amp;/g, '&'), base).toString();
}

/**
 * Follows the provider's redirects from `url` as a browser would, logging in as `login` at the
 * development login form, until the provider sends the browser to a URL starting with `stopAt`
 * (the app's callback or post-logout page); answers that URL. `confirmLogout` submits the
 * provider's 'sign out?' form.
 */
export async function followProvider(jar: CookieJar, url: string, stopAt: string, login?: string): Promise<string> {
  let next = url;
  let form: Record<string, string> | undefined;
  for (let step = 0; step < 12; step++) {
    if (next.startsWith(stopAt)) return next;
    const response = await browse(jar, next, form);
    form = undefined;
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      next = new URL(location, next).toString();
      continue;
    }
    const html = await response.text();
    if (response.status !== 200) throw new Error(`provider answered ${response.status}: ${html.slice(0, 500)}`);
    if (html.includes('name="prompt" value="login"')) {
      if (login === undefined) throw new Error('the provider asks for a login');
      form = { prompt: 'login', login, password: 'any password' };
    } else if (html.includes('name="prompt" value="consent"')) {
      form = { prompt: 'consent' };
    } else if (html.includes('name="xsrf"')) {
      const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
      form = { xsrf, logout: 'yes' };
    } else {
      throw new Error(`unexpected provider page: ${html.slice(0, 500)}`);
    }
    next = formAction(html, next);
  }
  throw new Error('too many steps at the provider');
}
