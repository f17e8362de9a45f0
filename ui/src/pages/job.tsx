// A job: its state and task counts, why instances wait, a task table paged
// by the server, its updates, config versions with a diff, its events, and
// the actions an operator takes on it. A periodic job has its schedule and
// its runs in place of tasks (job-periodic.tsx).
import { useState } from 'preact/hooks';
import { api, type ApiError, type Job, type PelotonEvent, type Task } from '../api';
import { Badge, Confirm, Empty, ErrorNote, Fact, JobId, JobRef, Pager, Section, StateCounts, Title, useNow } from '../components';
import { useEvents, useThrottled } from '../events';
import { Link, setQuery, useLocation } from '../router';
import {
  TASK_STATES,
  TERMINAL_JOB,
  WAITING_TASK,
  fmtAgo,
  fmtNum,
  fmtResources,
  fmtTime,
  health,
  jobState,
  jobType,
  taskState,
  taskView,
  useLoad,
  whyWaiting,
  type Loaded,
} from '../util';
import { JobActions } from './job-actions';
import { ConfigVersions, JobMigrations, Updates } from './job-parts';
import { PeriodicParts, RunOfNote, isPeriodic } from './job-periodic';
import { useCan } from '../session';

const PAGE = 50;
/** Waiting tasks whose reasons are read and grouped. */
const REASON_SAMPLE = 500;

export function JobPage({ id }: { id: string }) {
  const job = useLoad((s) => api.job(id, s).then((r) => r.job), [id]);
  // A job that cannot be read (unknown, or its region out of reach) is
  // said to be once, not by each part of the page.
  if (job.error && !job.data) {
    return (
      <>
        <Title sub={<span class="mono">{id}</span>}>Job</Title>
        <ErrorNote error={job.error} />
        <p>
          <Link to="/jobs">All jobs</Link>
        </p>
      </>
    );
  }
  return <JobView id={id} job={job} />;
}

function JobView({ id, job }: { id: string; job: Loaded<Job> }) {
  const loc = useLocation();
  const stateFilter = loc.query.get('tasks') ?? '';
  const instanceFilter = loc.query.get('task') ?? '';
  const offset = Number(loc.query.get('offset') ?? 0) || 0;
  const tasks = useLoad(
    (s) =>
      instanceFilter !== ''
        ? api.task(id, Number(instanceFilter), s).then(
            (r) => ({ tasks: [r.task], total: 1 }),
            (e: ApiError) => {
              if (e.status === 404) return { tasks: [] as Task[], total: 0 };
              throw e;
            },
          )
        : api.tasks(id, { states: stateFilter ? ['TASK_STATE_' + stateFilter] : undefined, offset, limit: PAGE }, s),
    [id, stateFilter, instanceFilter, offset],
  );
  const waiting = useLoad((s) => api.tasks(id, { states: WAITING_TASK.map((x) => 'TASK_STATE_' + x), limit: REASON_SAMPLE }, s), [id]);
  const [updatesTick, setUpdatesTick] = useState(0);

  const reloadTasks = useThrottled(() => tasks.reload(), 1000);
  const reloadWaiting = useThrottled(() => waiting.reload(), 2000);
  const reloadJob = useThrottled(() => job.reload(), 2000);
  const reloadUpdates = useThrottled(() => setUpdatesTick((t) => t + 1), 1000);
  const [live, setLive] = useState<PelotonEvent[]>([]);

  useEvents((ev) => {
    if (ev.jobId !== id) return;
    setLive((l) => [ev, ...l].slice(0, 200));
    if (ev.job && job.data) {
      job.set({ ...job.data, status: { ...job.data.status, ...ev.job } });
      // A periodic job's events (a tick, a run by hand, a suspend) change
      // its schedule state, which they do not carry.
      if (ev.job.updateId !== job.data.status?.updateId || isPeriodic(job.data)) reloadJob();
      reloadUpdates();
    }
    if (ev.task) {
      const t = ev.task;
      const rows = tasks.data?.tasks ?? [];
      const i = rows.findIndex((r) => r.instance === (t.instance ?? 0));
      if (instanceFilter !== '' && String(t.instance ?? 0) !== instanceFilter) {
        // another task than the one shown
      } else if (i >= 0 && (!stateFilter || taskState(t.state) === stateFilter)) {
        const next = rows.slice();
        next[i] = t;
        tasks.set({ ...tasks.data, tasks: next });
      } else if (i >= 0 || stateFilter) reloadTasks();
      else if ((tasks.data?.tasks?.length ?? 0) < PAGE) reloadTasks();
      reloadWaiting();
    }
  });

  const j = job.data;
  const st = jobState(j?.status?.state);
  const periodic = isPeriodic(j);
  return (
    <>
      <Title
        sub={
          <>
            <JobId id={id} />
            {j?.status?.region && <> · region {j.status.region}</>}
          </>
        }
      >
        {j?.spec?.name ?? 'Job'} {j && <Badge state={st} />} {j?.status?.periodic?.suspended && <Badge state="SUSPENDED" />}
      </Title>
      <ErrorNote error={job.error} />
      {j && <Moves job={j} />}
      {j?.status?.runOf?.jobId && <RunOfNote runOf={j.status.runOf} />}
      {j && (
        <JobSummary
          job={j}
          onChange={() => {
            job.reload();
            tasks.reload();
            reloadUpdates();
          }}
        />
      )}
      {j && periodic && <PeriodicParts key={id} job={j} onChange={() => job.reload()} />}
      {!periodic && (
        <>
          <Section title="Tasks by state" id="states">
            <StateCounts counts={j?.status?.taskStates ?? {}} order={TASK_STATES} label="Tasks by state" />
          </Section>
          <PendingReasons job={j} waiting={waiting.data?.tasks ?? []} total={waiting.data?.total ?? 0} />
          <Section
            title="Tasks"
            id="tasks"
            actions={
              <form class="filters inline" role="search" aria-label="Filter tasks" onSubmit={(e) => e.preventDefault()}>
                <label>
                  Task #{' '}
                  <input
                    type="number"
                    name="task"
                    min={0}
                    max={Math.max(0, (j?.spec?.instances ?? 1) - 1)}
                    value={instanceFilter}
                    placeholder="any"
                    onInput={(e) => setQuery({ task: (e.target as HTMLInputElement).value, offset: undefined })}
                  />
                </label>
                <label>
                  State{' '}
                  <select
                    name="state"
                    value={stateFilter}
                    disabled={instanceFilter !== ''}
                    onChange={(e) => setQuery({ tasks: (e.target as HTMLSelectElement).value, offset: 0 })}
                  >
                    <option value="">any</option>
                    {TASK_STATES.map((s) => (
                      <option key={s} value={s}>
                        {s.toLowerCase()}
                      </option>
                    ))}
                  </select>
                </label>
              </form>
            }
          >
            <ErrorNote error={tasks.error} />
            <TaskTable jobId={id} job={j} tasks={tasks.data?.tasks ?? []} />
            {instanceFilter === '' && (
              <Pager label="Task pages" offset={offset} size={PAGE} total={tasks.data?.total ?? 0} onChange={(o) => setQuery({ offset: o })} />
            )}
          </Section>
        </>
      )}
      <Updates jobId={id} tick={updatesTick} configVersion={Number(j?.configVersion ?? 1)} />
      <JobMigrations jobId={id} />
      <ConfigVersions jobId={id} current={Number(j?.configVersion ?? 0)} />
      <JobEvents jobId={id} live={live} />
    </>
  );
}

/** Moves says where a failover or a failback took the job's work, or whence it came. */
function Moves({ job }: { job: Job }) {
  const to = job.status?.movedTo;
  const from = job.status?.movedFrom;
  if (!to?.region && !from?.region) return null;
  return (
    <section class="card note-card" aria-label="Moved" data-testid="job-moves">
      {to?.region && (
        <p data-testid="moved-to">
          The job's work moved to region <strong>{to.region}</strong>
          {to.time && <> on {fmtTime(to.time)}</>}
          {to.jobId ? (
            <>
              {' '}
              and runs there as <JobRef id={to.jobId} name={job.spec?.name} />: this copy stays as it ended.
            </>
          ) : (
            <>; nothing was left to run.</>
          )}
        </p>
      )}
      {from?.region && (
        <p data-testid="moved-from">
          Moved here from region <strong>{from.region}</strong>
          {from.time && <> on {fmtTime(from.time)}</>}
          {from.jobId && (
            <>
              ; the job it came from: <JobRef id={from.jobId} name={job.spec?.name} />
            </>
          )}
          .
        </p>
      )}
    </section>
  );
}

function JobSummary({ job, onChange }: { job: Job; onChange: () => void }) {
  const st = jobState(job.status?.state);
  const canStop = useCan('stop-job', { jobId: job.id });
  const spec = job.spec ?? {};
  const periodic = isPeriodic(job);
  return (
    <section class="card" aria-label="Summary">
      <dl class="facts">
        <Fact k="Type" v={jobType(spec.type) + (periodic ? ', periodic' : '')} />
        <Fact k="Pool" v={<Link to="/pools">{spec.pool || '/'}</Link>} />
        <Fact
          k={periodic ? 'Instances per run' : 'Instances'}
          v={fmtNum(spec.instances ?? 0) + (spec.maxRunning ? `, at most ${fmtNum(spec.maxRunning)} at once` : '')}
        />
        <Fact k="Per task" v={fmtResources(spec.task?.resources)} />
        <Fact k="Priority" v={String(spec.priority ?? 0) + (spec.preemptible ? ', preemptible' : '')} />
        <Fact k="Config version" v={job.configVersion ?? '1'} />
        <Fact k="Created" v={fmtTime(job.status?.createTime)} />
        {job.status?.startTime && <Fact k="Started" v={fmtTime(job.status.startTime)} />}
        {job.status?.completionTime && <Fact k="Ended" v={fmtTime(job.status.completionTime)} />}
        {Object.entries(spec.labels ?? {}).length > 0 && (
          <Fact
            k="Labels"
            v={Object.entries(spec.labels ?? {})
              .map(([k, v]) => `${k}=${v}`)
              .join(', ')}
          />
        )}
      </dl>
      {job.status?.message && (
        <p class="note" data-testid="job-message">
          {job.status.message}
        </p>
      )}
      <div class="actions" data-can-stop={canStop === undefined ? 'asking' : String(canStop)}>
        {canStop && <Confirm
          label="Stop job"
          title={`Stop job ${spec.name ?? job.id}?`}
          body={
            periodic ? (
              <p>No tick launches a run any more, and the runs still going are stopped; the job ends KILLED.</p>
            ) : (
              <p>Every task of the job is killed; the job ends KILLED unless it finishes first.</p>
            )
          }
          danger
          disabled={TERMINAL_JOB.has(st) || st === 'KILLING'}
          action={() => api.stopJob(job.id)}
        />}
        <JobActions job={job} ended={TERMINAL_JOB.has(st)} periodic={periodic} onDone={onChange} />
      </div>
    </section>
  );
}

function PendingReasons({ job, waiting, total }: { job?: Job; waiting: Task[]; total: number }) {
  const groups = new Map<string, { n: number; instances: number[]; state: string }>();
  for (const t of waiting) {
    const why = whyWaiting(t, job);
    const g = groups.get(why) ?? { n: 0, instances: [], state: taskState(t.state) };
    g.n++;
    if (g.instances.length < 5) g.instances.push(t.instance ?? 0);
    groups.set(why, g);
  }
  const sorted = [...groups.entries()].sort((a, b) => b[1].n - a[1].n);
  return (
    <Section title="Why tasks wait" id="pending">
      {total === 0 ? (
        <Empty>No task is waiting.</Empty>
      ) : (
        <>
          <p class="muted small">
            {fmtNum(total)} waiting{total > waiting.length && `; reasons of the first ${fmtNum(waiting.length)}`}.
          </p>
          <ul class="reasons" data-testid="pending-reasons">
            {sorted.map(([why, g]) => (
              <li key={why}>
                <span class="count">{fmtNum(g.n)}</span> <Badge state={g.state} /> <span class="reason">{why}</span>{' '}
                <span class="muted small">
                  e.g.{' '}
                  {g.instances.map((i, k) => (
                    <span key={i}>
                      {k > 0 && ', '}
                      <Link to={`/jobs/${encodeURIComponent(job?.id ?? '')}/tasks/${i}`}>#{i}</Link>
                    </span>
                  ))}
                </span>
              </li>
            ))}
          </ul>
        </>
      )}
    </Section>
  );
}

function TaskTable({ jobId, job, tasks }: { jobId: string; job?: Job; tasks: Task[] }) {
  const now = useNow(5000);
  return (
    <div class="table-wrap">
      <table class="tasks">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">State</th>
            <th scope="col">Host</th>
            <th scope="col">Health</th>
            <th scope="col">Run</th>
            <th scope="col">Exit</th>
            <th scope="col">Reason</th>
            <th scope="col">Updated</th>
          </tr>
        </thead>
        <tbody>
          {tasks.map((t) => {
            const v = taskView(t, job, now);
            const s = v.state;
            const h = health(t.health);
            const r = health(t.ready);
            return (
              <tr key={t.instance ?? 0} data-instance={t.instance ?? 0} data-state={s}>
                <td class="num">
                  <Link to={`/jobs/${encodeURIComponent(jobId)}/tasks/${t.instance ?? 0}`}>{t.instance ?? 0}</Link>
                </td>
                <td>
                  <Badge state={s} />
                </td>
                <td>{t.host ? `${t.cluster ?? ''}/${t.host}` : ''}</td>
                <td>
                  {h && <Badge state={h} />} {r && <Badge state={r === 'HEALTHY' ? 'RUNNING' : r} label={r === 'HEALTHY' ? 'READY' : 'NOT READY'} />}
                </td>
                <td class="num">{t.run ?? ''}</td>
                <td class="num">{TERMINAL_EXIT.has(s) ? (t.exitCode ?? 0) : ''}</td>
                <td class="reason">
                  {v.waiting ?? (
                    <>
                      {v.reason}
                      {v.message && <span class="muted"> {v.message}</span>}
                    </>
                  )}
                  {v.previous && <span class="muted small"> (previous run: {v.previous})</span>}
                </td>
                <td title={t.updateTime}>{fmtAgo(t.updateTime, now)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {tasks.length === 0 && <Empty>No task here.</Empty>}
    </div>
  );
}

const TERMINAL_EXIT = new Set(['SUCCEEDED', 'FAILED']);

/** Event rows shown at first, and added by "Show older events". */
const EVENTS_SHOWN = 25;

function JobEvents({ jobId, live }: { jobId: string; live: PelotonEvent[] }) {
  const [n, setN] = useState(200);
  const [shown, setShown] = useState(EVENTS_SHOWN);
  const stored = useLoad((s) => api.newestEvents(jobId, { n }, s), [jobId, n]);
  const seen = new Set(live.map((e) => e.seq));
  const old = (stored.data?.events ?? []).filter((e) => !seen.has(e.seq)).reverse();
  const all = [...live, ...old];
  return (
    <Section title="Events" id="events">
      <ErrorNote error={stored.error} />
      {all.length > 0 && <p class="muted small">Newest first.</p>}
      <EventList events={all.slice(0, shown)} jobId={jobId} />
      {all.length > shown ? (
        <button type="button" onClick={() => setShown((k) => k + 4 * EVENTS_SHOWN)}>
          Show older events
        </button>
      ) : (
        stored.data?.older && (
          <button
            type="button"
            onClick={() => {
              setN((k) => Math.min(10000, k * 5));
              setShown((k) => k + 4 * EVENTS_SHOWN);
            }}
          >
            Read older events of the stored history
          </button>
        )
      )}
    </Section>
  );
}

export function EventList({ events, jobId }: { events: PelotonEvent[]; jobId: string }) {
  if (events.length === 0) return <Empty>No event yet.</Empty>;
  return (
    <div class="table-wrap events">
      <table>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">What</th>
            <th scope="col">State</th>
            <th scope="col">Detail</th>
          </tr>
        </thead>
        <tbody>
          {events.map((ev) => (
            <tr key={ev.seq} data-seq={ev.seq}>
              <td class="mono small">{fmtTime(ev.time)}</td>
              {ev.task ? (
                <>
                  <td>
                    <Link to={`/jobs/${encodeURIComponent(jobId)}/tasks/${ev.task.instance ?? 0}`}>task {ev.task.instance ?? 0}</Link>
                    <span class="muted small"> run {ev.task.run}</span>
                  </td>
                  <td>
                    <Badge state={taskState(ev.task.state)} />
                  </td>
                  <td class="reason">
                    {ev.task.host && `${ev.task.host} `}
                    {ev.task.reason} <span class="muted">{ev.task.message}</span>
                  </td>
                </>
              ) : (
                <>
                  <td>job</td>
                  <td>
                    <Badge state={jobState(ev.job?.state)} />
                  </td>
                  <td class="reason muted">{ev.job?.message}</td>
                </>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
