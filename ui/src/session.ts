// Who is using the UI. A server with authentication asks for a bearer
// token: it is kept in sessionStorage (this tab only, gone when it
// closes) and sent as `Authorization: Bearer` by every API call (api.ts)
// and by the event stream (events.ts). What the signed-in caller may do
// is asked of the server (AuthService.CanI, GET /v1/auth/can-i), once per
// question, so that the pages show only the actions it will allow. A
// server that takes an OIDC issuer's ID tokens also offers signing in
// with the issuer (oidc.ts); the ID token is then kept and sent the same
// way.
import { useEffect, useState } from 'preact/hooks';
import { finishSignIn, isReturn } from './oidc';

const KEY = 'peloton-token';

// A sign-in link (`peloton dev` prints one) carries the token in the
// address's fragment, /ui/#token=...: browsers do not send a fragment to
// the server, nor in a Referer. It is kept for this tab and removed from
// the address bar (and so from the history) before anything else runs.
(function tokenFromLink() {
  const m = /^#token=([A-Za-z0-9._~+/=-]{1,512})$/.exec(window.location.hash);
  if (!m) return;
  try {
    sessionStorage.setItem(KEY, m[1]);
  } catch {
    // storage disabled: the sign-in form will ask
  }
  window.history.replaceState(null, '', window.location.pathname + window.location.search);
})();

export function token(): string | null {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

/** authHeaders are the headers that authenticate a request. */
export function authHeaders(): Record<string, string> {
  const t = token();
  return t ? { Authorization: `Bearer ${t}` } : {};
}

export interface WhoAmI {
  name?: string;
  method?: string;
  roles?: string[];
  authentication?: boolean;
}

export type Session =
  | { phase: 'checking' }
  | { phase: 'unreachable'; error: string }
  | { phase: 'signed-out'; error?: string }
  | { phase: 'signed-in'; who: WhoAmI };

let session: Session = { phase: 'checking' };
const listeners = new Set<(s: Session) => void>();
const answers = new Map<string, Promise<boolean>>();

function set(s: Session) {
  session = s;
  answers.clear();
  listeners.forEach((l) => l(s));
}

async function message(resp: Response): Promise<string> {
  const text = await resp.text();
  try {
    return (JSON.parse(text) as { message?: string }).message ?? text;
  } catch {
    return text || resp.statusText;
  }
}

/** check asks the server who we are: signed in, or asked for a token. */
export async function check(): Promise<void> {
  let resp: Response;
  try {
    resp = await fetch('/v1/auth/whoami', { headers: { Accept: 'application/json', ...authHeaders() } });
  } catch (e) {
    // No answer at all: not a refusal. Ask again until the server answers.
    set({ phase: 'unreachable', error: `${(e as Error).message}` });
    window.setTimeout(() => void check(), 3000);
    return;
  }
  if (resp.ok) {
    set({ phase: 'signed-in', who: (await resp.json()) as WhoAmI });
    return;
  }
  const why = await message(resp);
  if (resp.status === 401) {
    const had = token() !== null;
    forget();
    set({ phase: 'signed-out', error: had ? `The token was refused: ${why}` : undefined });
    return;
  }
  set({ phase: 'signed-out', error: `The server answered ${resp.status}: ${why}` });
}

function forget() {
  try {
    sessionStorage.removeItem(KEY);
  } catch {
    // storage disabled: nothing kept
  }
}

/**
 * start finds out who we are when the app opens: back from an OIDC
 * issuer, the sign-in is finished first (its failure is shown on the
 * sign-in page); then the server is asked.
 */
let started = false;
async function start(): Promise<void> {
  if (started) return;
  started = true;
  if (isReturn()) {
    let idToken: string;
    try {
      idToken = await finishSignIn();
    } catch (e) {
      set({ phase: 'signed-out', error: (e as Error).message });
      return;
    }
    await signIn(idToken);
    return;
  }
  await check();
}

/** signIn keeps the token for this tab and checks it. */
export async function signIn(t: string): Promise<void> {
  try {
    sessionStorage.setItem(KEY, t.trim());
  } catch {
    set({ phase: 'signed-out', error: 'This browser keeps no session storage: cannot sign in.' });
    return;
  }
  await check();
}

/** signOut forgets the token; the page starts over. */
export function signOut() {
  forget();
  window.location.reload();
}

/** unauthorized is told of a 401 from any call: the session has ended. */
export function unauthorized(why: string) {
  if (session.phase !== 'signed-in' || !session.who.authentication) return;
  forget();
  set({ phase: 'signed-out', error: `Signed out: ${why}` });
}

export function useSession(): Session {
  const [s, setS] = useState(session);
  useEffect(() => {
    listeners.add(setS);
    setS(session);
    if (session.phase === 'checking') void start();
    return () => {
      listeners.delete(setS);
    };
  }, []);
  return s;
}

/** Target of a question: the pool acted on, or the job (its pool is looked up). */
export interface Target {
  pool?: string;
  jobId?: string;
}

/** can asks the server whether the caller may take action on target. */
export function can(action: string, target: Target = {}): Promise<boolean> {
  const key = `${action} ${target.pool ?? ''} ${target.jobId ?? ''}`;
  let answer = answers.get(key);
  if (!answer) {
    const q = new URLSearchParams({ action });
    if (target.pool) q.set('pool', target.pool);
    if (target.jobId) q.set('jobId', target.jobId);
    answer = fetch('/v1/auth/can-i?' + q.toString(), { headers: { Accept: 'application/json', ...authHeaders() } })
      .then(async (resp) => {
        if (resp.status === 401) unauthorized(await message(resp));
        if (!resp.ok) return false;
        return Boolean(((await resp.json()) as { allowed?: boolean }).allowed);
      })
      .catch(() => false);
    answers.set(key, answer);
  }
  return answer;
}

/** useCan is can's answer, undefined until it comes. */
export function useCan(action: string, target: Target = {}): boolean | undefined {
  const [allowed, setAllowed] = useState<boolean | undefined>(undefined);
  useEffect(() => {
    let live = true;
    void can(action, target).then((a) => live && setAllowed(a));
    return () => {
      live = false;
    };
  }, [action, target.pool, target.jobId]);
  return allowed;
}
