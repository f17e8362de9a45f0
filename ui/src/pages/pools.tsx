// Pools: the tree, and per pool the reservation, limit, demand (capped,
// and what its work asks for), allocation and entitlement of each resource
// and its waiting and running tasks over time, as the server keeps them
// (every sample for the last hour, means of a minute for a day, of ten
// minutes beyond, up to its history window), with the split of its quota
// across regions. A pool's reservation, limit and share are edited here.
import { useMemo, useState } from 'preact/hooks';
import { api, type Pool, type PoolHistory, type Resources } from '../api';
import { TimeChart, type Series } from '../chart';
import { Bar, Confirm, Empty, ErrorNote, Section, Title } from '../components';
import { Link, useLocation } from '../router';
import { useCan } from '../session';
import { fmtMem, fmtNum, fmtResource, num, useInterval, useLoad } from '../util';

const FIELDS = ['reservation', 'limit', 'demand', 'uncappedDemand', 'allocation', 'entitlement'] as const;
type Field = (typeof FIELDS)[number];
const FIELD_LABEL: Record<Field, string> = {
  reservation: 'reservation',
  limit: 'limit',
  demand: 'demand',
  uncappedDemand: 'asked',
  allocation: 'allocation',
  entitlement: 'entitlement',
};

const SERIES: Series[] = [
  { label: 'reservation', color: '--c-reservation', dash: [6, 4] },
  { label: 'limit', color: '--c-limit', dash: [2, 4] },
  { label: 'demand', color: '--c-demand' },
  { label: 'asked', color: '--c-uncapped', dash: [4, 2] },
  { label: 'allocation', color: '--c-allocation' },
  { label: 'entitlement', color: '--c-entitlement' },
];
const TASK_SERIES: Series[] = [
  { label: 'waiting', color: '--c-pending' },
  { label: 'running', color: '--c-allocation' },
];

/** How far back the charts reach, in seconds (0: the server's whole window). */
const RANGES: [string, number][] = [
  ['1 hour', 3600],
  ['6 hours', 6 * 3600],
  ['1 day', 86400],
  ['all kept', 0],
];

function seconds(d: string | undefined): number {
  return d ? Number.parseFloat(d) : 0;
}

function usedResources(p: Pool): string[] {
  return (p.resources ?? [])
    .filter(
      (r) =>
        r.name === 'cpu' || r.name === 'mem' || num(r.reservation) > 0 || num(r.demand) > 0 || num(r.uncappedDemand) > 0 || num(r.allocation) > 0,
    )
    .map((r) => r.name);
}

export function PoolsPage() {
  const loc = useLocation();
  const region = useLoad(() => api.version(), []);
  const pools = useLoad((s) => api.pools(s), []);
  useInterval(() => pools.reload(), 2000);
  const byPath = new Map((pools.data?.pools ?? []).map((p) => [p.path, p]));
  const selected = loc.query.get('pool') ?? ([...byPath.keys()].find((p) => p !== '/') ?? '/');
  const pool = byPath.get(selected);

  return (
    <>
      <Title sub={`The pool tree of region ${region.data?.region ?? ''} (this gateway's); history as the server keeps it.`}>Pools</Title>
      <ErrorNote error={pools.error} />
      <div class="split">
        <Section title="Tree" id="tree">
          {byPath.has('/') ? (
            <PoolTree path="/" byPath={byPath} selected={selected} />
          ) : (
            !pools.loading && <Empty>No pool.</Empty>
          )}
        </Section>
        <div class="stack-col">{pool ? <PoolDetail pool={pool} /> : <Empty>Choose a pool.</Empty>}</div>
      </div>
    </>
  );
}

function PoolTree({ path, byPath, selected }: { path: string; byPath: Map<string, Pool>; selected: string }) {
  const p = byPath.get(path);
  if (!p) return null;
  const cpu = p.resources?.find((r) => r.name === 'cpu');
  const name = path === '/' ? '/ (root)' : path.split('/').pop();
  return (
    <ul class="tree">
      <li>
        <Link
          to={`/pools?pool=${encodeURIComponent(path)}`}
          aria-current={path === selected ? 'true' : undefined}
          class={path === selected ? 'selected' : ''}
          data-pool={path}
        >
          {name}
        </Link>
        <span class="muted small">
          {' '}
          {p.jobs ?? 0} jobs · cpu {fmtNum(num(cpu?.allocation), 1)} used of {fmtNum(num(cpu?.entitlement), 1)} entitled
          {(p.pendingTasks ?? 0) > 0 && ` · ${fmtNum(p.pendingTasks ?? 0)} tasks waiting`}
        </span>
        {(p.children ?? []).map((c) => (
          <PoolTree key={c} path={c} byPath={byPath} selected={selected} />
        ))}
      </li>
    </ul>
  );
}

function PoolDetail({ pool }: { pool: Pool }) {
  const split = useLoad((s) => api.pool(pool.path, s).then((r) => r.pool), [pool.path]);
  useInterval(() => split.reload(), 5000);
  const [range, setRange] = useState(3600);
  const hist = useLoad(
    (s) => api.poolHistory(pool.path, range > 0 ? new Date(Date.now() - range * 1000) : undefined, s),
    [pool.path, range],
  );
  // The server samples every interval (10 s by default): read again as often.
  useInterval(() => hist.reload(), Math.max(2000, seconds(hist.data?.interval) * 1000 || 10000));
  const resources = usedResources(pool);
  const charts = useMemo(() => chartData(hist.data, resources), [hist.data, resources.join()]);
  const times = hist.data?.times ?? [];
  const tasks: (number | null)[][] = [times, hist.data?.pendingTasks ?? [], hist.data?.runningTasks ?? []];
  return (
    <>
      <Section title={`Pool ${pool.path}`} id="pool">
        <div class="table-wrap">
          <table class="pool-now" data-pool={pool.path}>
            <caption class="sr-only">Latest figures of pool {pool.path}</caption>
            <thead>
              <tr>
                <th scope="col">Resource</th>
                {FIELDS.map((f) => (
                  <th scope="col" key={f} title={f === 'uncappedDemand' ? 'what its work asks for, before the reservation and limit cap demand' : undefined}>
                    {FIELD_LABEL[f]}
                  </th>
                ))}
                <th scope="col">Share</th>
              </tr>
            </thead>
            <tbody>
              {(pool.resources ?? [])
                .filter((r) => resources.includes(r.name))
                .map((r) => (
                  <tr key={r.name} data-resource={r.name}>
                    <th scope="row">{r.name}</th>
                    {FIELDS.map((f) => (
                      <td key={f} class="num" data-field={f}>
                        {fmtResource(r.name, num(r[f]))}
                      </td>
                    ))}
                    <td class="num">{fmtNum(num(r.share), 2)}</td>
                  </tr>
                ))}
            </tbody>
          </table>
        </div>
        <p class="muted small" data-tasks={pool.pendingTasks ?? 0}>
          {pool.jobs ?? 0} unfinished jobs · {fmtNum(pool.pendingTasks ?? 0)} tasks waiting for resources or a host ·{' '}
          {fmtNum(pool.runningTasks ?? 0)} running
          {(pool.spec?.hostPools?.length ?? 0) > 0 && ` · host pools ${pool.spec?.hostPools?.join(', ')}`} ·{' '}
          <Link to={`/jobs?pool=${encodeURIComponent(pool.path)}`}>its jobs</Link>
        </p>
        <div class="actions">
          <EditPool pool={pool} />
        </div>
        <div class="chart-head">
          <label>
            History{' '}
            <select value={String(range)} onChange={(e) => setRange(Number((e.target as HTMLSelectElement).value))} data-range>
              {RANGES.map(([label, secs]) => (
                <option key={secs} value={String(secs)}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          <span class="muted small" data-history={times.length}>
            {times.length === 0
              ? 'no samples yet'
              : `${times.length} samples kept by the server since ${new Date(times[0] * 1000).toLocaleString()}` +
                ` (every ${fmtNum(seconds(hist.data?.interval))} s for the last hour, then means per minute and per 10 minutes; window ${fmtNum(seconds(hist.data?.window) / 3600)} h)`}
          </span>
        </div>
        <ErrorNote error={hist.error} />
        <div class="charts">
          <TimeChart key="tasks" title={`tasks of ${pool.path}`} series={TASK_SERIES} data={tasks} format={(v) => fmtNum(v)} />
          {charts.map((c) => (
            <TimeChart
              key={c.name}
              title={`${c.name} of ${pool.path}`}
              series={SERIES}
              data={c.data}
              format={(v) => fmtResource(c.name, v)}
            />
          ))}
        </div>
      </Section>
      <Section title="Split across regions" id="regions">
        <ErrorNote error={split.error} />
        {(split.data?.regions?.length ?? 0) === 0 ? (
          <Empty>No split: a single region, or the global pass has not run yet.</Empty>
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Region</th>
                  <th scope="col">Reservation</th>
                  <th scope="col">Limit</th>
                  <th scope="col">Demand</th>
                </tr>
              </thead>
              <tbody>
                {split.data?.regions?.map((r) => (
                  <tr key={r.region}>
                    <th scope="row">{r.region}</th>
                    <td>
                      {fmtNum(r.reservation?.cpu ?? 0, 2)} cpu · {fmtMem(r.reservation?.memMb)}
                    </td>
                    <td>
                      {fmtNum(num(r.limit?.cpu), 2)} cpu · {fmtMem(num(r.limit?.memMb))}
                    </td>
                    <td class="wide">
                      <Bar label="cpu" used={r.demand?.cpu ?? 0} total={Math.max(r.reservation?.cpu ?? 0, r.demand?.cpu ?? 0)} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Section>
    </>
  );
}

/** The server's columns as chart data: x first, then one column per series. */
function chartData(h: PoolHistory | undefined, resources: string[]) {
  const times = h?.times ?? [];
  return resources.map((name) => {
    const r = h?.resources?.find((x) => x.name === name);
    const data: (number | null)[][] = [times];
    for (const f of FIELDS) {
      const col = r?.[f] ?? [];
      data.push(times.map((_, i) => (col[i] === undefined || (f === 'limit' && col[i] < 0) ? null : col[i])));
    }
    return { name, data };
  });
}

const AMOUNTS: [keyof Resources, string][] = [
  ['cpu', 'cpu (cores)'],
  ['memMb', 'mem (MiB)'],
  ['diskMb', 'disk (MiB)'],
  ['gpu', 'gpu'],
];
type Part = 'reservation' | 'limit' | 'share';
const PARTS: [Part, string][] = [
  ['reservation', 'Reservation'],
  ['limit', 'Limit (empty: none)'],
  ['share', 'Share (empty: 1)'],
];

/** amountsOf turns a form's fields into the spec's amounts; empty fields are left out. */
function amountsOf(form: Record<string, string>, part: Part): Resources {
  const out: Resources = {};
  for (const [k] of AMOUNTS) {
    const v = form[`${part}.${k}`]?.trim();
    if (!v) continue;
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0) throw new Error(`${part}.${k}: a number, 0 or more`);
    out[k] = n;
  }
  return out;
}

/** EditPool replaces a pool's reservation, limit and share (UpdatePool), as pool update -f does. */
function EditPool({ pool }: { pool: Pool }) {
  const allowed = useCan('edit-pool', { pool: pool.path });
  const [form, setForm] = useState<Record<string, string>>({});
  // The root pool is the cluster: its size is the cluster's capacity.
  if (!allowed || !pool.spec || pool.path === '/') return null;
  const fill = () => {
    const f: Record<string, string> = {};
    for (const [part] of PARTS) for (const [k] of AMOUNTS) {
      const v = pool.spec?.[part]?.[k];
      f[`${part}.${k}`] = v === undefined ? '' : String(v);
    }
    setForm(f);
  };
  return (
    <Confirm
      label="Edit pool…"
      title={`Edit pool ${pool.path}`}
      wide
      onOpen={fill}
      body={<p>Children's reservations sum to at most their parent's; the server refuses a change that breaks it.</p>}
      action={() =>
        api.updatePool({
          ...pool.spec,
          path: pool.path,
          reservation: amountsOf(form, 'reservation'),
          limit: amountsOf(form, 'limit'),
          share: amountsOf(form, 'share'),
        })
      }
    >
      <table class="pool-form">
        <thead>
          <tr>
            <th scope="col">Resource</th>
            {PARTS.map(([p, label]) => (
              <th scope="col" key={p}>
                {label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {AMOUNTS.map(([k, label]) => (
            <tr key={k}>
              <th scope="row">{label}</th>
              {PARTS.map(([p, plabel]) => (
                <td key={p}>
                  <input
                    type="number"
                    min={0}
                    step="any"
                    name={`${p}.${k}`}
                    aria-label={`${plabel.split(' ')[0]} ${label}`}
                    value={form[`${p}.${k}`] ?? ''}
                    onInput={(e) => setForm({ ...form, [`${p}.${k}`]: (e.target as HTMLInputElement).value })}
                  />
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </Confirm>
  );
}
