// A real OpenID Connect provider (panva's oidc-provider, certified by the OpenID Foundation) for
// iGot's sign-in tests, on http://127.0.0.1 only. Started by tests/oidc_provider.py:
//
//   node tests/oidc/provider.mjs PORT
//
// with, in the environment:
//   IGOT_OIDC_CLIENT    {"client_id": ..., "client_secret": ..., "redirect_uris": [...]}
//   IGOT_OIDC_ACCOUNTS  {"ana": {"email": "ana@example.com", "email_verified": true, "name": "Ana"}, ...}
//   IGOT_OIDC_CLAIMS_IN_ID_TOKEN  "1": the e-mail and name ride in the ID token as well (Google,
//                       Entra, Keycloak do so); else only at the userinfo endpoint, as the spec
//                       reads (oidc-provider's default), so both of a relying party's paths are tested.
//
// Sign-in goes through the provider's own development pages (devInteractions): a login name and
// password form (any password: the page is oidc-provider's, not ours to change), then consent.
// The login name is a key of IGOT_OIDC_ACCOUNTS; another name is an unknown account (no claims).
// Prints READY once it listens; logs nothing else unless something fails. Exits when stdin closes.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import Provider from 'oidc-provider';

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port <= 0 || port > 65535) {
  console.error('usage: node tests/oidc/provider.mjs PORT');
  process.exit(2);
}
const client = JSON.parse(process.env.IGOT_OIDC_CLIENT ?? 'null');
const accounts = JSON.parse(process.env.IGOT_OIDC_ACCOUNTS ?? '{}');
if (!client?.client_id || !client?.client_secret || !Array.isArray(client?.redirect_uris)) {
  console.error('IGOT_OIDC_CLIENT must be {"client_id", "client_secret", "redirect_uris": [...]}');
  process.exit(2);
}

// A signing key of this run's own: the development keystore oidc-provider falls back to is public.
const signing = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });

const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [{
    client_id: client.client_id,
    client_secret: client.client_secret,
    redirect_uris: client.redirect_uris,
    response_types: ['code'],
    grant_types: ['authorization_code'],
    token_endpoint_auth_method: 'client_secret_basic',
  }],
  jwks: { keys: [{ ...signing, kid: randomUUID(), use: 'sig', alg: 'RS256' }] },
  // A confidential client too must send a PKCE challenge (S256: oidc-provider takes no other).
  pkce: { required: () => true },
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name', 'family_name', 'given_name', 'preferred_username'],
  },
  conformIdTokenClaims: process.env.IGOT_OIDC_CLAIMS_IN_ID_TOKEN !== '1',
  features: { devInteractions: { enabled: true } },
  async findAccount(ctx, id) {
    if (!Object.hasOwn(accounts, id)) return undefined;
    return { accountId: id, claims: async () => ({ sub: id, ...accounts[id] }) };
  },
  // Cookies signed with a key of this run; they are not Secure because the page is plain http
  // (koa marks them Secure only on https, and proxy stays off: no X-Forwarded-Proto is trusted).
  cookies: { keys: [randomUUID()] },
  ttl: { Interaction: 600, Session: 600, Grant: 600, AuthorizationCode: 60, AccessToken: 600, IdToken: 600 },
});
provider.proxy = false;
// Errors a test provokes (a replayed code) are answered to the client; keep the test log quiet.
provider.on('server_error', (ctx, err) => console.error('server_error', err));

// Gone with the test run: its stdin is a pipe from pytest, closed when pytest ends, even killed.
process.stdin.on('end', () => process.exit(0)).on('error', () => process.exit(0)).resume();

provider.listen(port, '127.0.0.1').on('listening', () => console.log('READY')).on('error', (err) => {
  console.error(`cannot listen on 127.0.0.1:${port}: ${err.message}`);
  process.exit(1);
});
