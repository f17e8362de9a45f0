// Jobs: every job of every region, searchable and sortable, a page at a
// time. The state and pool filters are the server's (ListJobs); search,
// sort and paging are done here, as ListJobs has no paging. The list is
// read once and follows the event stream (joblist.ts).
import { MAX_LISTED_JOBS, api, type Job } from '../api';
import { Badge, Empty, ErrorNote, JobId, Pager, SortHeaders, Title, useNow } from '../components';
import { useJobList } from '../joblist';
import { NewJob } from './job-actions';
import { names, useReach } from '../reach';
import { Link, setQuery, useLocation } from '../router';
import { JOB_STATES, WAITING_TASK, fmtAgo, fmtNum, jobState, jobType, sortRows, useLoad } from '../util';

const PAGE = 50;

function owner(j: Job): string {
  const l = j.spec?.labels ?? {};
  return l.owner ?? l.team ?? '';
}

function running(j: Job): number {
  return j.status?.taskStates?.RUNNING ?? 0;
}

function pending(j: Job): number {
  return WAITING_TASK.reduce((a, s) => a + (j.status?.taskStates?.[s] ?? 0), 0);
}

const JOB_COLUMNS: [string, string][] = [
  ['name', 'Name'],
  ['', 'ID'],
  ['state', 'State'],
  ['instances', 'Tasks'],
  ['running', 'Running'],
  ['pending', 'Pending'],
  ['pool', 'Pool'],
  ['region', 'Region'],
  ['owner', 'Owner'],
  ['created', 'Created'],
];

const KEYS: Record<string, (j: Job) => string | number> = {
  name: (j) => j.spec?.name ?? '',
  state: (j) => JOB_STATES.indexOf(jobState(j.status?.state)),
  pool: (j) => j.spec?.pool ?? '/',
  region: (j) => j.status?.region ?? '',
  owner,
  instances: (j) => j.spec?.instances ?? 0,
  running,
  pending,
  created: (j) => j.status?.createTime ?? '',
};

/** matches says whether a job matches every word of q: a word is a part of its
 * id, name, pool, region, type or state, or a label as key=value or key. */
function matches(j: Job, q: string): boolean {
  const words = q.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return true;
  const labels = Object.entries(j.spec?.labels ?? {}).map(([k, v]) => `${k}=${v}`.toLowerCase());
  const hay = [j.id, j.spec?.name, j.spec?.pool, j.status?.region, jobType(j.spec?.type), jobState(j.status?.state)]
    .map((s) => (s ?? '').toLowerCase())
    .concat(labels);
  return words.every((w) => hay.some((h) => h.includes(w)));
}

export function JobsPage() {
  const loc = useLocation();
  const now = useNow(5000);
  const q = loc.query.get('q') ?? '';
  const state = loc.query.get('state') ?? '';
  const pool = loc.query.get('pool') ?? '';
  const sort = loc.query.get('sort') ?? '-created';
  const offset = Number(loc.query.get('offset') ?? 0) || 0;
  const jobs = useJobList(state ? [state] : undefined, pool || undefined);
  const pools = useLoad((s) => api.pools(s), []);
  const reach = useReach();

  const list = sortRows(
    (jobs.data?.jobs ?? []).filter((j) => matches(j, q)),
    KEYS,
    sort,
    'created',
    (a, b) => a.id.localeCompare(b.id),
  );
  const page = list.slice(offset, offset + PAGE);
  const onSort = (s: string) => setQuery({ sort: s, offset: 0 });

  return (
    <>
      <Title sub={reach.cut.length ? `The jobs of the regions in reach; ${names(reach.cut)} out of reach, their jobs missing.` : 'Every job of every region.'}>
        Jobs
      </Title>
      {jobs.data?.truncated && (
        <p class="muted" role="note">
          The list holds the oldest {fmtNum(MAX_LISTED_JOBS)} jobs; filter by state or pool to see the others.
        </p>
      )}
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          Search
          <input
            type="search"
            name="q"
            value={q}
            placeholder="name, id, label=value…"
            onInput={(e) => setQuery({ q: (e.target as HTMLInputElement).value, offset: 0 })}
          />
        </label>
        <label>
          State
          <select name="state" value={state} onChange={(e) => setQuery({ state: (e.target as HTMLSelectElement).value, offset: 0 })}>
            <option value="">any</option>
            {JOB_STATES.map((s) => (
              <option key={s} value={s}>
                {s.toLowerCase()}
              </option>
            ))}
          </select>
        </label>
        <label>
          Pool
          <select name="pool" value={pool} onChange={(e) => setQuery({ pool: (e.target as HTMLSelectElement).value, offset: 0 })}>
            <option value="">any</option>
            {(pools.data?.pools ?? []).map((p) => (
              <option key={p.path} value={p.path}>
                {p.path}
              </option>
            ))}
          </select>
        </label>
        <div class="actions">
          <NewJob />
        </div>
      </form>
      <ErrorNote error={jobs.error} />
      <div class="card">
        <div class="table-wrap">
          <table class="jobs">
            <caption class="sr-only">Jobs, sorted by {sort.replace(/^-/, '')}</caption>
            <thead>
              <SortHeaders cols={JOB_COLUMNS} sort={sort} onSort={onSort} />
            </thead>
            <tbody>
              {page.map((j) => (
                <tr key={j.id} data-job={j.id}>
                  <td>
                    <Link to={`/jobs/${encodeURIComponent(j.id)}`}>{j.spec?.name || '(no name)'}</Link>
                    <span class="muted small"> {jobType(j.spec?.type)}</span>
                  </td>
                  <td>
                    <JobId id={j.id} />
                  </td>
                  <td>
                    <Badge state={jobState(j.status?.state)} />
                    {j.status?.movedTo?.region && <div class="muted small">moved to {j.status.movedTo.region}</div>}
                  </td>
                  <td class="num">{fmtNum(j.spec?.instances ?? 0)}</td>
                  <td class="num">{fmtNum(running(j))}</td>
                  <td class="num">{fmtNum(pending(j))}</td>
                  <td>{j.spec?.pool || '/'}</td>
                  <td>{j.status?.region}</td>
                  <td>{owner(j)}</td>
                  <td title={j.status?.createTime}>{fmtAgo(j.status?.createTime, now)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {!jobs.loading && !jobs.error && list.length === 0 && <Empty>No job matches.</Empty>}
        <Pager label="Jobs pages" offset={offset} size={PAGE} total={list.length} onChange={(o) => setQuery({ offset: o })} />
      </div>
    </>
  );
}
