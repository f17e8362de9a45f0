// The web UI of Peloton: one page per part of the system, each following
// the event stream (and sampling what has no events) so that none needs a
// reload to stay true.
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { UNREACHABLE, api } from './api';
import { useStreamStatus } from './events';
import { signIn, signOut, useSession, type WhoAmI } from './session';
import { authConfig, issuerHost, startSignIn, type OIDCInfo } from './oidc';
import { Link, match, useLocation } from './router';
import { Unreachable, useNow } from './components';
import { fmtAgo, useLoad } from './util';
import { names, useReach, type Reach } from './reach';
import { Overview } from './pages/overview';
import { JobsPage } from './pages/jobs';
import { JobPage } from './pages/job';
import { TaskPage } from './pages/task';
import { PoolsPage } from './pages/pools';
import { HostsPage } from './pages/hosts';
import { RegionsPage } from './pages/regions';
import { MigrationsPage } from './pages/migrations';

const NAV = [
  { to: '/', label: 'Overview', title: 'Overview' },
  { to: '/jobs', label: 'Jobs', title: 'Jobs' },
  { to: '/pools', label: 'Pools', title: 'Pools' },
  { to: '/hosts', label: 'Hosts', title: 'Hosts' },
  { to: '/migrations', label: 'Migrations', title: 'Migrations' },
  { to: '/regions', label: 'Regions & drills', title: 'Regions and drills' },
];

function Page({ path }: { path: string }) {
  let m: Record<string, string> | null;
  if (path === '/' || path === '') return <Overview />;
  if (path === '/jobs') return <JobsPage />;
  if ((m = match('/jobs/:id', path))) return <JobPage id={m.id} />;
  if ((m = match('/jobs/:id/tasks/:instance', path))) return <TaskPage id={m.id} instance={Number(m.instance)} />;
  if (path === '/pools') return <PoolsPage />;
  if (path === '/hosts') return <HostsPage />;
  if (path === '/migrations') return <MigrationsPage />;
  if (path === '/regions') return <RegionsPage />;
  return (
    <div class="card">
      <h1>Not found</h1>
      <p>
        Nothing at {path}. <Link to="/">Back to the overview</Link>.
      </p>
    </div>
  );
}

function section(path: string): string {
  const first = '/' + (path.split('/').filter(Boolean)[0] ?? '');
  return NAV.find((n) => n.to === first)?.to ?? '/';
}

/**
 * SignIn asks who you are when the server authenticates callers: with
 * the OIDC issuer it offers (oidc.ts), or by a pasted bearer token.
 */
function SignIn({ error }: { error?: string }) {
  const input = useRef<HTMLInputElement>(null);
  const [busy, setBusy] = useState(false);
  const [oidc, setOIDC] = useState<OIDCInfo | undefined>(undefined);
  const [oidcError, setOIDCError] = useState<string | undefined>(undefined);
  useEffect(() => {
    document.title = 'Sign in · Peloton';
    input.current?.focus();
    let live = true;
    authConfig()
      .then((c) => live && setOIDC(c.oidc))
      .catch(() => {
        // Without the answer only the token form is offered.
      });
    return () => {
      live = false;
    };
  }, []);
  const submit = async (e: Event) => {
    e.preventDefault();
    const t = input.current?.value.trim() ?? '';
    if (!t) return;
    setBusy(true);
    setOIDCError(undefined);
    await signIn(t);
    setBusy(false);
  };
  const withIssuer = async () => {
    setBusy(true);
    setOIDCError(undefined);
    try {
      // Asked again: the issuer may have been down when the page opened.
      const fresh = (await authConfig()).oidc ?? oidc;
      if (!fresh) throw new Error('This server no longer offers signing in with an issuer.');
      await startSignIn(fresh);
    } catch (e) {
      setOIDCError((e as Error).message);
      setBusy(false);
    }
  };
  const shown = oidcError ?? error;
  return (
    <>
      <header class="top">
        <span class="brand">Peloton</span>
      </header>
      <main id="main">
        <section class="card signin" aria-labelledby="signin-title">
          <h1 id="signin-title" tabIndex={-1}>
            Sign in
          </h1>
          {shown && (
            <p class="error" role="alert" data-testid="signin-error">
              {shown}
            </p>
          )}
          {oidc && (
            <div class="signin-oidc" data-testid="signin-oidc">
              <p>
                Sign in with your account at <strong>{issuerHost(oidc)}</strong>: you go there and come back signed in.
              </p>
              <button type="button" class="primary" disabled={busy} onClick={withIssuer}>
                Sign in with {issuerHost(oidc)}
              </button>
              <p class="muted or">or with a token:</p>
            </div>
          )}
          <p>
            {oidc ? 'Paste' : 'This Peloton asks who you are. Paste'} your bearer token (
            <code>peloton auth token create NAME</code> prints one; a <code>peloton dev</code> cluster prints a sign-in link and
            keeps its token in its data directory's <code>token</code> file): it is kept in this tab only, until you sign out or
            close it.
          </p>
          <form onSubmit={submit}>
            <label class="block">
              Token
              <input ref={input} type="password" name="token" autoComplete="off" spellcheck={false} required />
            </label>
            <button type="submit" disabled={busy}>
              Sign in
            </button>
          </form>
        </section>
      </main>
    </>
  );
}

function App() {
  const session = useSession();
  if (session.phase === 'checking') {
    return (
      <main id="main">
        <p class="muted">Connecting…</p>
      </main>
    );
  }
  if (session.phase === 'unreachable') {
    return (
      <main id="main">
        <h1>Peloton</h1>
        <p class="error" role="alert" data-testid="unreachable">
          {UNREACHABLE} ({session.error})
        </p>
      </main>
    );
  }
  if (session.phase === 'signed-out') return <SignIn error={session.error} />;
  return <Shell who={session.who} />;
}

function Shell({ who }: { who: WhoAmI }) {
  const loc = useLocation();
  const stream = useStreamStatus();
  const version = useLoad(() => api.version(), []);
  const reach = useReach();
  const active = section(loc.path);
  useEffect(() => {
    const title = NAV.find((n) => n.to === active)?.title ?? 'Peloton';
    document.title = `${title} · Peloton`;
    // Move focus to the page's heading for screen readers and keyboards.
    const h = document.querySelector<HTMLElement>('main h1');
    h?.focus({ preventScroll: true });
  }, [loc.path]);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <Link to="/" class="brand">
          Peloton
        </Link>
        <nav aria-label="Main">
          <ul>
            {NAV.map((n) => (
              <li key={n.to}>
                <Link to={n.to} aria-current={n.to === active ? 'page' : undefined}>
                  {n.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div class="status" role="status" aria-live="polite">
          <span class={`dot ${stream}`} aria-hidden="true" />
          <span data-testid="stream">{stream === 'live' ? 'live' : stream === 'down' ? 'reconnecting' : 'connecting'}</span>
          {version.data?.region && <span class="muted"> · via {version.data.region}</span>}
          {reach.cut.length > 0 && (
            <span class="cut" data-testid="cut-count">
              {' '}
              · {reach.cut.length} {reach.cut.length === 1 ? 'region' : 'regions'} out of reach
            </span>
          )}
        </div>
        {who.authentication && (
          <div class="who">
            <span data-testid="who" title={(who.roles ?? []).join('; ') || 'no role'}>
              {who.name}
            </span>{' '}
            <button type="button" class="link" onClick={signOut}>
              Sign out
            </button>
          </div>
        )}
      </header>
      <main id="main">
        <Unreachable />
        <CutOff reach={reach} />
        <Page path={loc.path} />
      </main>
      <footer class="muted">
        Peloton {version.data?.version ?? ''} · <a href="/v1/openapi.json">API</a> · <a href="/metrics">metrics</a>
      </footer>
    </>
  );
}

/**
 * CutOff says, on every page, which regions the UI's region cannot reach:
 * what they hold is missing from the page, and while they are out of
 * reach they may be moving this region's jobs (or this region may be the
 * one cut off: from inside, both look the same).
 */
function CutOff({ reach }: { reach: Reach }) {
  const now = useNow(5000);
  if (!reach.cut.length) return null;
  const seen = reach.cut.map((r) => `${r.name} ${r.health}${r.lastSeen ? `, last seen ${fmtAgo(r.lastSeen, now)}` : ''}`).join('; ');
  return (
    <p class="note cut-off" role="alert" data-testid="cut-off">
      <strong>
        {reach.self ?? 'This region'} cannot reach {names(reach.cut)}
      </strong>{' '}
      ({seen}). These pages show what {reach.self ?? 'this region'} holds and what the others still answer: their jobs, hosts
      and pools may be missing. Meanwhile {reach.cut.length === 1 ? 'it' : 'they'} may move the jobs of {reach.self ?? 'this region'}{' '}
      that can fail over.
    </p>
  );
}

render(<App />, document.getElementById('app')!);
