// Signing in with an OpenID Connect issuer, when the server takes its ID
// tokens (auth.oidc): the authorization code flow with PKCE (RFC 7636),
// the UI being a public client (no secret). The server says, without
// credentials, whether it is offered and how (GET /ui/auth-config: the
// issuer, the client id, the scopes and the issuer's endpoints from its
// discovery document).
//
// Signing in: a code verifier (64 random characters), its S256 challenge
// (base64url of its SHA-256), a random state and nonce are made and kept
// in sessionStorage (this tab), and the tab goes to the issuer's
// authorization endpoint. The issuer sends it back to the redirect path
// with a code and the state; the state must be the one kept, the code is
// redeemed at the token endpoint with the verifier (so a code caught on
// the way is of no use), and the ID token's nonce must be the one kept.
// The ID token is then kept as a pasted token is (session.ts) and sent as
// the bearer token; the code and state leave the address bar at once.

/** How the server offers signing in with an OIDC issuer. */
export interface OIDCInfo {
  issuer: string;
  clientId: string;
  scopes?: string[];
  redirectPath: string;
  authorizationEndpoint?: string;
  tokenEndpoint?: string;
  /** Why the issuer's endpoints are unknown (its discovery failed). */
  problem?: string;
}

export interface AuthConfig {
  authentication?: boolean;
  oidc?: OIDCInfo;
}

/** The page the issuer sends the tab back to (ui.OIDCRedirectPath). */
export const REDIRECT_PATH = '/ui/signin/oidc';

const PENDING = 'peloton-oidc-pending';

/** What a sign-in under way keeps in this tab until the issuer answers. */
interface Pending {
  state: string;
  nonce: string;
  verifier: string;
  issuer: string;
  clientId: string;
  tokenEndpoint: string;
  redirectUri: string;
  /** The page to go back to once signed in. */
  returnTo: string;
}

/** authConfig asks the server how one signs in. */
export async function authConfig(): Promise<AuthConfig> {
  const resp = await fetch('/ui/auth-config', { headers: { Accept: 'application/json' } });
  if (!resp.ok) throw new Error(`the server answered ${resp.status} to /ui/auth-config`);
  return (await resp.json()) as AuthConfig;
}

/** issuerHost names the issuer on the sign-in button. */
export function issuerHost(info: OIDCInfo): string {
  try {
    return new URL(info.issuer).host;
  } catch {
    return info.issuer;
  }
}

function base64url(bytes: Uint8Array): string {
  let bin = '';
  bytes.forEach((b) => (bin += String.fromCharCode(b)));
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** random is n random bytes in base64url: unreserved characters only. */
function random(n: number): string {
  return base64url(crypto.getRandomValues(new Uint8Array(n)));
}

/** challenge is the S256 code challenge of a verifier. */
export async function challenge(verifier: string): Promise<string> {
  const sum = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  return base64url(new Uint8Array(sum));
}

/**
 * startSignIn sends the tab to the issuer; it throws, with a message for
 * the sign-in page, when it cannot.
 */
export async function startSignIn(info: OIDCInfo): Promise<void> {
  if (!info.authorizationEndpoint || !info.tokenEndpoint) {
    throw new Error(`The issuer ${info.issuer} cannot be used now: ${info.problem ?? 'its endpoints are unknown'}.`);
  }
  if (!window.crypto?.subtle) throw new Error('This browser cannot sign in with an issuer here (no Web Crypto: the page must be served over https or from localhost).');
  // 48 random bytes: a verifier of 64 characters (RFC 7636: 43 to 128).
  const verifier = random(48);
  const pending: Pending = {
    state: random(24),
    nonce: random(24),
    verifier,
    issuer: info.issuer,
    clientId: info.clientId,
    tokenEndpoint: info.tokenEndpoint,
    redirectUri: window.location.origin + (info.redirectPath || REDIRECT_PATH),
    returnTo: window.location.pathname.startsWith('/ui') && window.location.pathname !== REDIRECT_PATH ? window.location.pathname + window.location.search : '/ui/',
  };
  try {
    sessionStorage.setItem(PENDING, JSON.stringify(pending));
  } catch {
    throw new Error('This browser keeps no session storage: cannot sign in.');
  }
  const url = new URL(info.authorizationEndpoint);
  const scopes = info.scopes?.length ? info.scopes : ['openid'];
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: info.clientId,
    redirect_uri: pending.redirectUri,
    scope: scopes.join(' '),
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: await challenge(verifier),
    code_challenge_method: 'S256',
  })) {
    url.searchParams.set(k, v);
  }
  window.location.assign(url.toString());
}

/** isReturn tells whether the tab is back from the issuer. */
export function isReturn(): boolean {
  return window.location.pathname === REDIRECT_PATH;
}

function takePending(): Pending | null {
  try {
    const raw = sessionStorage.getItem(PENDING);
    sessionStorage.removeItem(PENDING);
    return raw ? (JSON.parse(raw) as Pending) : null;
  } catch {
    return null;
  }
}

/** claimsOf reads the payload of a JWT (its signature is the server's to check). */
function claimsOf(jwt: string): Record<string, unknown> {
  const part = jwt.split('.')[1] ?? '';
  const b64 = part.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (part.length % 4)) % 4);
  const bin = atob(b64);
  const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
  return JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
}

/**
 * finishSignIn takes the issuer's answer in the address: it returns the
 * ID token, or throws with a message for the sign-in page. Either way the
 * code and state leave the address bar (and the history) first, for the
 * page the sign-in started from, and the sign-in under way is forgotten:
 * an answer is taken once.
 */
export async function finishSignIn(): Promise<string> {
  const params = new URLSearchParams(window.location.search);
  const pending = takePending();
  window.history.replaceState(null, '', pending?.returnTo ?? '/ui/');
  const error = params.get('error');
  if (error) {
    const desc = params.get('error_description');
    const what = error === 'access_denied' ? 'The sign-in was declined at the issuer' : 'The issuer refused the sign-in';
    throw new Error(`${what} (${error}${desc ? `: ${desc}` : ''}).`);
  }
  if (!pending) throw new Error('This tab started no sign-in with the issuer, or has already finished it: sign in again.');
  if (params.get('state') !== pending.state) {
    throw new Error('The answer from the issuer does not belong to the sign-in this tab started (its state differs): refused. Sign in again.');
  }
  const iss = params.get('iss');
  if (iss && iss !== pending.issuer) throw new Error(`The answer came from ${iss}, not from the issuer ${pending.issuer}: refused.`);
  const code = params.get('code');
  if (!code) throw new Error('The issuer sent the tab back without a code: sign in again.');
  let resp: Response;
  try {
    resp = await fetch(pending.tokenEndpoint, {
      method: 'POST',
      headers: { Accept: 'application/json' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: pending.redirectUri,
        client_id: pending.clientId,
        code_verifier: pending.verifier,
      }),
    });
  } catch (e) {
    throw new Error(`The issuer's token endpoint ${pending.tokenEndpoint} cannot be reached: ${(e as Error).message}.`);
  }
  const text = await resp.text();
  let body: { id_token?: string; error?: string; error_description?: string } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    // not JSON: said below
  }
  if (!resp.ok) {
    const why = body.error ? `${body.error}${body.error_description ? `: ${body.error_description}` : ''}` : text.slice(0, 200) || resp.statusText;
    throw new Error(`The issuer's token endpoint refused the code (${resp.status}): ${why}.`);
  }
  const idToken = body.id_token;
  if (!idToken || idToken.split('.').length !== 3) throw new Error('The issuer answered without an ID token (is openid among the scopes?).');
  let claims: Record<string, unknown>;
  try {
    claims = claimsOf(idToken);
  } catch {
    throw new Error('The ID token from the issuer cannot be read.');
  }
  if (claims.nonce !== pending.nonce) throw new Error('The ID token is not for the sign-in this tab started (its nonce differs): refused.');
  const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (claims.iss !== pending.issuer || !aud.includes(pending.clientId)) {
    throw new Error(`The ID token is not the issuer's for this client (iss ${String(claims.iss)}, aud ${aud.join(', ')}): refused.`);
  }
  return idToken;
}
