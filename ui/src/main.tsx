// The web UI of Peloton: one page per part of the system, each following
// the event stream (and sampling what has no events) so that none needs a
// reload to stay true.
import { render } from 'preact';
import { useEffect } from 'preact/hooks';
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { api } from './api';
import { useStreamStatus } from './events';
import { Link, match, useLocation } from './router';
import { useLoad } from './util';
import { Overview } from './pages/overview';
import { JobsPage } from './pages/jobs';
import { JobPage } from './pages/job';
import { TaskPage } from './pages/task';
import { PoolsPage } from './pages/pools';
import { HostsPage } from './pages/hosts';
import { RegionsPage } from './pages/regions';

const NAV = [
  { to: '/', label: 'Overview', title: 'Overview' },
  { to: '/jobs', label: 'Jobs', title: 'Jobs' },
  { to: '/pools', label: 'Pools', title: 'Pools' },
  { to: '/hosts', label: 'Hosts', title: 'Hosts' },
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

function App() {
  const loc = useLocation();
  const stream = useStreamStatus();
  const version = useLoad(() => api.version(), []);
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
        </div>
      </header>
      <main id="main">
        <Page path={loc.path} />
      </main>
      <footer class="muted">
        Peloton {version.data?.version ?? ''} · <a href="/v1/openapi.json">API</a> · <a href="/metrics">metrics</a>
      </footer>
    </>
  );
}

render(<App />, document.getElementById('app')!);
