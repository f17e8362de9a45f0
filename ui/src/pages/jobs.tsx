// Jobs: every job of every region, a page at a time. The server filters
// (state, pool, a search of name or id), orders (by creation time), counts
// and pages (ListJobs); the tab reads only the page it shows and follows
// the event stream on it (jobpage.ts).
import { useRef } from 'preact/hooks';
import { api, type Job } from '../api';
import { Badge, Empty, ErrorNote, JobId, Pager, SortHeaders, Title, useNow } from '../components';
import { useJobPage } from '../jobpage';
import { NewJob } from './job-actions';
import { isPeriodic, nextRun } from './job-periodic';
import { names, useReach } from '../reach';
import { Link, setQuery, useLocation } from '../router';
import { JOB_STATES, WAITING_TASK, fmtAgo, fmtNum, jobState, jobType, useLoad } from '../util';

/** Jobs on a page: the most the tab holds at once. */
export const PAGE = 50;

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

// The server orders by creation time only: the other columns do not sort.
const JOB_COLUMNS: [string, string][] = [
  ['', 'Name'],
  ['', 'ID'],
  ['', 'State'],
  ['', 'Tasks'],
  ['', 'Running'],
  ['', 'Pending'],
  ['', 'Pool'],
  ['', 'Region'],
  ['', 'Owner'],
  ['created', 'Created'],
];

export function JobsPage() {
  const loc = useLocation();
  const now = useNow(5000);
  const q = loc.query.get('q') ?? '';
  const state = loc.query.get('state') ?? '';
  const pool = loc.query.get('pool') ?? '';
  const sort = loc.query.get('sort') ?? '-created';
  const offset = Number(loc.query.get('offset') ?? 0) || 0;
  const key = [q, state, pool, sort].join('\u0000');
  // The page token of each page read so far (by its offset), for these
  // filters; an offset never reached from the first page starts over.
  const tokens = useRef({ key, byOffset: new Map<number, string | undefined>([[0, undefined]]) });
  if (tokens.current.key !== key) tokens.current = { key, byOffset: new Map([[0, undefined]]) };
  const at = tokens.current.byOffset.has(offset) ? offset : 0;
  const jobs = useJobPage({
    states: state ? [state] : undefined,
    pool: pool || undefined,
    search: q.trim() || undefined,
    newestFirst: sort !== 'created',
    pageToken: tokens.current.byOffset.get(at),
    limit: PAGE,
  });
  if (jobs.current && jobs.data?.next) tokens.current.byOffset.set(at + PAGE, jobs.data.next);
  const pools = useLoad((s) => api.pools(s), []);
  const reach = useReach();
  const page = jobs.data?.jobs ?? [];
  const total = jobs.data?.total ?? 0;
  const onSort = (s: string) => setQuery({ sort: s, offset: 0 });
  // Pages are reached one from the next (a token each): no last page.
  const onPage = (o: number) => setQuery({ offset: tokens.current.byOffset.has(o) ? o : 0 });

  return (
    <>
      <Title sub={reach.cut.length ? `The jobs of the regions in reach; ${names(reach.cut)} out of reach, their jobs missing.` : 'Every job of every region.'}>
        Jobs
      </Title>
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          Search
          <input
            type="search"
            name="q"
            value={q}
            placeholder="a part of a name or id"
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
              {page.map((j) => {
                // A periodic job runs no tasks of its own: its runs are jobs.
                const periodic = isPeriodic(j);
                const next = periodic ? nextRun(j, now) : '';
                return (
                  <tr key={j.id} data-job={j.id}>
                    <td>
                      <Link to={`/jobs/${encodeURIComponent(j.id)}`}>{j.spec?.name || '(no name)'}</Link>
                      <span class="muted small"> {jobType(j.spec?.type)}{periodic && ', periodic'}</span>
                    </td>
                    <td>
                      <JobId id={j.id} />
                    </td>
                    <td>
                      <Badge state={jobState(j.status?.state)} />
                      {j.status?.movedTo?.region && <div class="muted small">moved to {j.status.movedTo.region}</div>}
                      {next && (
                        <div class="muted small next-run" data-next-run title={j.status?.periodic?.nextRunTime}>
                          {next}
                        </div>
                      )}
                    </td>
                    {periodic ? (
                      [0, 1, 2].map((k) => (
                        <td key={k} class="num muted" title="A periodic job runs no tasks of its own: each of its runs is a job">
                          —
                        </td>
                      ))
                    ) : (
                      <>
                        <td class="num">{fmtNum(j.spec?.instances ?? 0)}</td>
                        <td class="num">{fmtNum(running(j))}</td>
                        <td class="num">{fmtNum(pending(j))}</td>
                      </>
                    )}
                    <td>{j.spec?.pool || '/'}</td>
                    <td>{j.status?.region}</td>
                    <td>{owner(j)}</td>
                    <td title={j.status?.createTime}>{fmtAgo(j.status?.createTime, now)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
        {!jobs.loading && !jobs.error && page.length === 0 && <Empty>No job matches.</Empty>}
        <Pager label="Jobs pages" offset={at} size={PAGE} total={total} onChange={onPage} noLast />
      </div>
    </>
  );
}
