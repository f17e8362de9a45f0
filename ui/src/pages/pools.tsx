// Pools: the tree, and per pool the reservation, limit, demand, allocation
// and entitlement of each resource over time, sampled by this page every
// second, with the split of its quota across regions.
import { useMemo, useState } from 'preact/hooks';
import { api, type Pool } from '../api';
import { TimeChart, type Series } from '../chart';
import { Bar, Empty, ErrorNote, Section, Title } from '../components';
import { Link, useLocation } from '../router';
import { fmtMem, fmtNum, fmtResource, num, useInterval, useLoad } from '../util';

const FIELDS = ['reservation', 'limit', 'demand', 'allocation', 'entitlement'] as const;
type Field = (typeof FIELDS)[number];

const SERIES: Series[] = [
  { label: 'reservation', color: '--c-reservation', dash: [6, 4] },
  { label: 'limit', color: '--c-limit', dash: [2, 4] },
  { label: 'demand', color: '--c-demand' },
  { label: 'allocation', color: '--c-allocation' },
  { label: 'entitlement', color: '--c-entitlement' },
];

/** Samples kept per pool: ten minutes at one a second. */
const KEEP = 600;

interface Sample {
  t: number;
  /** resource name → field → amount */
  r: Record<string, Record<Field, number>>;
}

/** Samples survive leaving the page, so coming back shows the recent past. */
const history = new Map<string, Sample[]>();

function record(pools: Pool[], t: number) {
  for (const p of pools) {
    const s: Sample = { t, r: {} };
    for (const res of p.resources ?? []) {
      s.r[res.name] = Object.fromEntries(FIELDS.map((f) => [f, num(res[f])])) as Record<Field, number>;
    }
    const h = history.get(p.path) ?? [];
    h.push(s);
    if (h.length > KEEP) h.splice(0, h.length - KEEP);
    history.set(p.path, h);
  }
}

function usedResources(p: Pool): string[] {
  return (p.resources ?? [])
    .filter((r) => r.name === 'cpu' || r.name === 'mem' || num(r.reservation) > 0 || num(r.demand) > 0 || num(r.allocation) > 0)
    .map((r) => r.name);
}

export function PoolsPage() {
  const loc = useLocation();
  const [tick, setTick] = useState(0);
  const region = useLoad(() => api.version(), []);
  const pools = useLoad(
    (s) =>
      api.pools(s).then((r) => {
        record(r.pools ?? [], Date.now() / 1000);
        setTick((t) => t + 1);
        return r;
      }),
    [],
  );
  useInterval(() => pools.reload(), 1000);
  const byPath = new Map((pools.data?.pools ?? []).map((p) => [p.path, p]));
  const selected = loc.query.get('pool') ?? ([...byPath.keys()].find((p) => p !== '/') ?? '/');
  const pool = byPath.get(selected);

  return (
    <>
      <Title sub={`The pool tree of region ${region.data?.region ?? ''} (this gateway's); figures sampled every second while this page is open.`}>Pools</Title>
      <ErrorNote error={pools.error} />
      <div class="split">
        <Section title="Tree" id="tree">
          {byPath.has('/') ? (
            <PoolTree path="/" byPath={byPath} selected={selected} />
          ) : (
            !pools.loading && <Empty>No pool.</Empty>
          )}
        </Section>
        <div class="stack-col">
          {pool ? <PoolDetail pool={pool} tick={tick} /> : <Empty>Choose a pool.</Empty>}
        </div>
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
        </span>
        {(p.children ?? []).map((c) => (
          <PoolTree key={c} path={c} byPath={byPath} selected={selected} />
        ))}
      </li>
    </ul>
  );
}

function PoolDetail({ pool, tick }: { pool: Pool; tick: number }) {
  const split = useLoad((s) => api.pool(pool.path, s).then((r) => r.pool), [pool.path]);
  useInterval(() => split.reload(), 5000);
  const resources = usedResources(pool);
  const samples = history.get(pool.path) ?? [];
  const charts = useMemo(
    () =>
      resources.map((name) => {
        const data: (number | null)[][] = [samples.map((s) => s.t)];
        for (const f of FIELDS) {
          data.push(samples.map((s) => {
            const v = s.r[name]?.[f];
            return v === undefined || !Number.isFinite(v) ? null : v;
          }));
        }
        return { name, data };
      }),
    [pool.path, tick, resources.join()],
  );
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
                  <th scope="col" key={f}>
                    {f}
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
        <p class="muted small">
          {pool.jobs ?? 0} unfinished jobs
          {(pool.spec?.hostPools?.length ?? 0) > 0 && ` · host pools ${pool.spec?.hostPools?.join(', ')}`} ·{' '}
          <Link to={`/jobs?pool=${encodeURIComponent(pool.path)}`}>its jobs</Link>
        </p>
        <div class="charts">
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
