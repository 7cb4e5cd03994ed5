// A real OpenID provider (the certified `oidc-provider` package) on loopback, for the single
// sign-on tests. It listens on a free port at once and prints `issuer <url>`; the provider itself
// is built when the test names the relying party's redirect base:
//
//   POST /__test/client?base=http://127.0.0.1:PORT   registers client `halyard` (secret
//        `halyard-secret`), redirecting to BASE/auth/oidc/callback and, after logout, to
//        BASE/signed-out; PKCE is required.
//   POST /__test/account?login=EMAIL&groups=a,b&verified=true   sets what a login as EMAIL
//        claims (`verified` is JSON: `false`, or `"true"` as Apple sends it); an unknown login
//        claims its own name as email, verified, and no groups.
//   POST /__test/mode?m=none|aud|sig   tampers with the next ID tokens the token endpoint
//        returns: `aud` names another audience, `sig` signs with a key the provider never
//        published, under the published key's id.
//
// The development login page takes any login and password; the login becomes the account id.

import { createServer } from 'node:http';
import Provider from 'oidc-provider';
import { SignJWT, decodeJwt, exportJWK, generateKeyPair } from 'jose';

const signing = await generateKeyPair('RS256', { extractable: true });
const published = { ...(await exportJWK(signing.privateKey)), kid: 'signing-1', alg: 'RS256', use: 'sig' };
const rogue = (await generateKeyPair('RS256')).privateKey;

const accounts = new Map();
let mode = 'none';
let provider = null;

const server = createServer((request, response) => {
  const url = new URL(request.url, 'http://127.0.0.1');
  if (url.pathname.startsWith('/__test/')) {
    control(url, response);
    return;
  }
  if (!provider) {
    response.writeHead(503).end('no client registered yet');
    return;
  }
  provider.callback()(request, response);
});

function control(url, response) {
  const query = url.searchParams;
  if (url.pathname === '/__test/client') {
    provider = build(server.issuer, query.get('base'));
  } else if (url.pathname === '/__test/account') {
    accounts.set(query.get('login'), {
      email: query.get('email') ?? query.get('login'),
      email_verified: JSON.parse(query.get('verified') ?? 'true'),
      groups: (query.get('groups') ?? '').split(',').filter(Boolean),
    });
  } else if (url.pathname === '/__test/mode') {
    mode = query.get('m');
  } else {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(204).end();
}

function build(issuer, base) {
  const built = new Provider(issuer, {
    clients: [{
      client_id: 'halyard',
      client_secret: 'halyard-secret',
      redirect_uris: [`${base}/auth/oidc/callback`],
      post_logout_redirect_uris: [`${base}/signed-out`],
      response_types: ['code'],
      grant_types: ['authorization_code'],
      token_endpoint_auth_method: 'client_secret_basic',
    }],
    jwks: { keys: [published] },
    cookies: { keys: ['oidc-provider-test-cookies'] },
    pkce: { required: () => true },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
    // The email and groups in the ID token itself, as most providers put them.
    conformIdTokenClaims: false,
    async findAccount(_context, id) {
      const account = accounts.get(id) ?? { email: id, email_verified: true, groups: [] };
      return { accountId: id, claims: async () => ({ sub: id, name: id, ...account }) };
    },
    features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
  });
  built.use(async (context, next) => {
    await next();
    if (context.path !== '/token' || mode === 'none' || !context.body?.id_token) return;
    const claims = decodeJwt(context.body.id_token);
    let key = signing.privateKey;
    if (mode === 'aud') claims.aud = 'someone-else';
    if (mode === 'sig') key = rogue;
    const idToken = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: published.kid }).sign(key);
    context.body = { ...context.body, id_token: idToken };
  });
  return built;
}

server.listen(0, '127.0.0.1', () => {
  server.issuer = `http://127.0.0.1:${server.address().port}`;
  console.log(`issuer ${server.issuer}`);
});
