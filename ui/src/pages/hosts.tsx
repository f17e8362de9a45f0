// Hosts: every host of every region, filtered, sorted and a page at a time
// (ListHosts has no paging: this is done here), their state, what is
// allocated on them, their labels; drain (with a deadline), undrain, down
// and up.
import { useRef } from 'preact/hooks';
import { api, type Host } from '../api';
import { Badge, Bar, Confirm, Empty, ErrorNote, Pager, Section, SortHeaders, Title, useNow } from '../components';
import { useEvents, useThrottled } from '../events';
import { setQuery, useLocation } from '../router';
import { fmtAgo, fmtMem, fmtNum, fmtUntil, hostState, sortRows, useInterval, useLoad } from '../util';
import { useCan } from '../session';

const STATES = ['UP', 'DRAINING', 'DRAINED', 'DOWN'];
/** Labels every host has that say nothing new. */
const NOISE = new Set(['hostname', 'peloton.io/host']);

function matches(h: Host, q: string): boolean {
  const words = q.toLowerCase().split(/\s+/).filter(Boolean);
  const hay = [h.id, h.hostname ?? '', h.hostPool ?? '', ...Object.entries(h.labels ?? {}).map(([k, v]) => `${k}=${v}`)].map((s) =>
    s.toLowerCase(),
  );
  return words.every((w) => hay.some((x) => x.includes(w)));
}

const PAGE = 50;

/** Share of a host's capacity allocated, 0 to 1. */
function used(h: Host, r: 'cpu' | 'memMb'): number {
  const cap = h.capacity?.[r] ?? 0;
  return cap > 0 ? (h.allocated?.[r] ?? 0) / cap : 0;
}

const HOST_COLUMNS: [string, string][] = [
  ['host', 'Host'],
  ['state', 'State'],
  ['region', 'Region'],
  ['cluster', 'Cluster'],
  ['cpu', 'Allocated'],
  ['tasks', 'Tasks'],
  ['', 'Labels'],
  ['seen', 'Last seen'],
  ['', 'Actions'],
];

const KEYS: Record<string, (h: Host) => string | number> = {
  host: (h) => h.id,
  state: (h) => STATES.indexOf(hostState(h.state)),
  region: (h) => h.region ?? '',
  cluster: (h) => h.cluster ?? '',
  cpu: (h) => used(h, 'cpu'),
  mem: (h) => used(h, 'memMb'),
  tasks: (h) => h.tasks ?? 0,
  seen: (h) => h.lastSeen ?? '',
};

export function HostsPage() {
  const allowed = useCan('manage-host');
  const canManage = allowed === true;
  const loc = useLocation();
  const now = useNow(2000);
  const q = loc.query.get('q') ?? '';
  const region = loc.query.get('region') ?? '';
  const cluster = loc.query.get('cluster') ?? '';
  const state = loc.query.get('state') ?? '';
  const sort = loc.query.get('sort') ?? 'region';
  const offset = Number(loc.query.get('offset') ?? 0) || 0;
  const hosts = useLoad((s) => api.hosts(s), []);
  useInterval(() => hosts.reload(), 2000);
  const reload = useThrottled(() => hosts.reload(), 1000);
  useEvents((ev) => {
    if (ev.hostPoolMove || (ev.task && ev.task.host)) reload();
  });

  const all = hosts.data?.hosts ?? [];
  const regions = [...new Set(all.map((h) => h.region ?? ''))].sort();
  const clusters = [...new Set(all.map((h) => h.cluster ?? ''))].sort();
  const shown = all.filter(
    (h) =>
      (!region || h.region === region) &&
      (!cluster || h.cluster === cluster) &&
      (!state || hostState(h.state) === state) &&
      matches(h, q),
  );
  sortRows(shown, KEYS, sort, 'region', (a, b) =>
    [a.region ?? '', a.cluster ?? '', a.id].join('/').localeCompare([b.region ?? '', b.cluster ?? '', b.id].join('/'), undefined, { numeric: true }),
  );
  const page = shown.slice(offset, offset + PAGE);
  const onSort = (k: string) => setQuery({ sort: k, offset: 0 });
  const filter = (k: string) => (v: string) => setQuery({ [k]: v, offset: 0 });

  return (
    <>
      <Title sub="Hosts as the regions' host managers report them.">Hosts</Title>
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          Search
          <input type="search" value={q} placeholder="host, label=value…" onInput={(e) => setQuery({ q: (e.target as HTMLInputElement).value, offset: 0 })} />
        </label>
        <Select label="Region" value={region} options={regions} onChange={filter('region')} />
        <Select label="Cluster" value={cluster} options={clusters} onChange={filter('cluster')} />
        <Select label="State" value={state} options={STATES} onChange={filter('state')} />
      </form>
      <ErrorNote error={hosts.error} />
      <Section title={`${fmtNum(shown.length)} hosts`} id="hosts">
        <div class="table-wrap">
          <table class="hosts" data-can-manage={allowed === undefined ? 'asking' : String(allowed)}>
            <caption class="sr-only">Hosts, sorted by {sort.replace(/^-/, '')}</caption>
            <thead>
              <SortHeaders cols={HOST_COLUMNS} sort={sort} onSort={onSort} />
            </thead>
            <tbody>
              {page.map((h) => (
                <HostRow key={`${h.region}/${h.id}`} h={h} now={now} onChange={hosts.reload} canManage={canManage} />
              ))}
            </tbody>
          </table>
        </div>
        {!hosts.loading && !hosts.error && shown.length === 0 && <Empty>No host matches.</Empty>}
        <Pager label="Host pages" offset={offset} size={PAGE} total={shown.length} onChange={(o) => setQuery({ offset: o })} />
      </Section>
    </>
  );
}

function Select({ label, value, options, onChange }: { label: string; value: string; options: string[]; onChange: (v: string) => void }) {
  return (
    <label>
      {label}
      <select value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        <option value="">any</option>
        {options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </label>
  );
}

function HostRow({ h, now, onChange, canManage }: { h: Host; now: number; onChange: () => void; canManage: boolean }) {
  const s = hostState(h.state);
  const labels = Object.entries(h.labels ?? {}).filter(([k]) => !NOISE.has(k));
  return (
    <tr data-host={h.id} data-region={h.region} data-state={s}>
      <th scope="row">
        {h.hostname ?? h.id}
        <div class="muted small">
          {h.id} · host pool {h.hostPool}
          {h.hostPoolTarget && ` → ${h.hostPoolTarget}`}
        </div>
      </th>
      <td data-label="State">
        <Badge state={s} />
        {h.drainReason && <div class="muted small">{h.drainReason}</div>}
        {h.drainDeadline && s === 'DRAINING' && (
          <div class="muted small" data-testid="drain-deadline" title={h.drainDeadline}>
            batch tasks killed {fmtUntil(h.drainDeadline, now)}
          </div>
        )}
      </td>
      <td data-label="Region">{h.region}</td>
      <td data-label="Cluster">
        {h.cluster} <span class="muted small">{h.kind}</span>
      </td>
      <td class="wide" data-label="Allocated">
        {/* A full host is well packed, not in trouble: no warning colours. */}
        <Bar label="cpu" used={h.allocated?.cpu ?? 0} total={h.capacity?.cpu ?? 0} plain />
        <Bar
          label="mem"
          used={h.allocated?.memMb ?? 0}
          total={h.capacity?.memMb ?? 0}
          text={`${fmtMem(h.allocated?.memMb)} / ${fmtMem(h.capacity?.memMb)}`}
          plain
        />
        {(h.capacity?.gpu ?? 0) > 0 && <Bar label="gpu" used={h.allocated?.gpu ?? 0} total={h.capacity?.gpu ?? 0} plain />}
      </td>
      <td class="num" data-label="Tasks">
        {h.tasks ?? 0}
      </td>
      <td data-label="Labels">
        <ul class="chips" aria-label="Labels">
          {labels.map(([k, v]) => (
            <li key={k}>
              {k}={v}
            </li>
          ))}
        </ul>
      </td>
      <td data-label="Last seen" title={h.lastSeen}>
        {fmtAgo(h.lastSeen, now)}
      </td>
      <td class="actions">{canManage && <HostActions h={h} state={s} onChange={onChange} />}      </td>
    </tr>
  );
}

/**
 * HostActions are the CLI's host drain, undrain, down and up: an UP host
 * can be drained (with a reason and, for batch runs, a deadline); a
 * draining or drained one put back or marked down (a host with runs left
 * only by force, which kills them); a DOWN one brought up.
 */
function HostActions({ h, state, onChange }: { h: Host; state: string; onChange: () => void }) {
  const reason = useRef<HTMLInputElement>(null);
  const deadline = useRef<HTMLInputElement>(null);
  const force = useRef<HTMLInputElement>(null);
  const done = (p: Promise<unknown>) => p.then(onChange);
  if (state === 'UP') {
    return (
      <Confirm
        label="Drain"
        title={`Drain ${h.id}?`}
        body="It takes no new work; service instances move off under their SLA, batch tasks finish (or, past the deadline, are killed to run elsewhere); revocable tasks are killed at once."
        action={() => {
          const mins = Number(deadline.current?.value || 0);
          if (!(mins >= 0)) throw new Error('deadline: minutes, 0 or more');
          return done(api.drain(h, reason.current?.value || 'drained from the web UI', mins > 0 ? Math.round(mins * 60) : undefined));
        }}
      >
        <label class="block">
          Reason
          <input ref={reason} type="text" name="reason" placeholder="kernel upgrade" />
        </label>
        <label class="block">
          Deadline for batch tasks (minutes; empty: let them finish)
          <input ref={deadline} type="number" name="deadline" min={0} step="any" />
        </label>
      </Confirm>
    );
  }
  if (state === 'DOWN') {
    return <Confirm label="Up" title={`Bring ${h.id} up?`} body="It takes work again." action={() => done(api.undrain(h))} />;
  }
  return (
    <>
      <Confirm label="Undrain" title={`Put ${h.id} back into service?`} action={() => done(api.undrain(h))} />
      <Confirm
        label="Down"
        title={`Mark ${h.id} down?`}
        danger
        body={
          state === 'DRAINED'
            ? 'It is drained: nothing runs on it. Down takes it out of service until it is brought up.'
            : `It is still draining, with ${h.tasks ?? 0} tasks on it: only by force, which kills them.`
        }
        action={() => done(api.markDown(h, !!force.current?.checked))}
      >
        {state !== 'DRAINED' && (
          <label class="check">
            <input ref={force} type="checkbox" name="force" /> Force: kill what still runs there
          </label>
        )}
      </Confirm>
    </>
  );
}
