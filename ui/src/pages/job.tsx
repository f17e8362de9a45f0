// A job: its state and task counts, why instances wait, a task table paged
// by the server, its updates, config versions with a diff, its events, and
// the actions an operator takes on it.
import { useState } from 'preact/hooks';
import { api, type Job, type PelotonEvent, type Task } from '../api';
import { Badge, Confirm, Empty, ErrorNote, Pager, Section, StateCounts, Title, useNow } from '../components';
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
  useLoad,
} from '../util';
import { ConfigVersions, Updates } from './job-parts';
import { useCan } from '../session';

const PAGE = 50;
/** Waiting tasks whose reasons are read and grouped. */
const REASON_SAMPLE = 500;

export function JobPage({ id }: { id: string }) {
  const loc = useLocation();
  const stateFilter = loc.query.get('tasks') ?? '';
  const offset = Number(loc.query.get('offset') ?? 0) || 0;
  const job = useLoad((s) => api.job(id, s).then((r) => r.job), [id]);
  const tasks = useLoad(
    (s) => api.tasks(id, { states: stateFilter ? ['TASK_STATE_' + stateFilter] : undefined, offset, limit: PAGE }, s),
    [id, stateFilter, offset],
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
      if (ev.job.updateId !== job.data.status?.updateId) reloadJob();
      reloadUpdates();
    }
    if (ev.task) {
      const t = ev.task;
      const rows = tasks.data?.tasks ?? [];
      const i = rows.findIndex((r) => r.instance === (t.instance ?? 0));
      if (i >= 0 && (!stateFilter || taskState(t.state) === stateFilter)) {
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
  return (
    <>
      <Title
        sub={
          <>
            <span class="mono">{id}</span>
            {j?.status?.region && <> · region {j.status.region}</>}
          </>
        }
      >
        {j?.spec?.name ?? 'Job'} {j && <Badge state={st} />}
      </Title>
      <ErrorNote error={job.error} />
      {j && <JobSummary job={j} />}
      <Section title="Tasks by state" id="states">
        <StateCounts counts={j?.status?.taskStates ?? {}} order={TASK_STATES} label="Tasks by state" />
      </Section>
      <PendingReasons job={j} waiting={waiting.data?.tasks ?? []} total={waiting.data?.total ?? 0} />
      <Section
        title="Tasks"
        id="tasks"
        actions={
          <label>
            State{' '}
            <select value={stateFilter} onChange={(e) => setQuery({ tasks: (e.target as HTMLSelectElement).value, offset: 0 })}>
              <option value="">any</option>
              {TASK_STATES.map((s) => (
                <option key={s} value={s}>
                  {s.toLowerCase()}
                </option>
              ))}
            </select>
          </label>
        }
      >
        <ErrorNote error={tasks.error} />
        <TaskTable jobId={id} tasks={tasks.data?.tasks ?? []} />
        <Pager label="Task pages" offset={offset} size={PAGE} total={tasks.data?.total ?? 0} onChange={(o) => setQuery({ offset: o })} />
      </Section>
      <Updates jobId={id} tick={updatesTick} />
      <ConfigVersions jobId={id} current={Number(j?.configVersion ?? 0)} />
      <JobEvents jobId={id} live={live} />
    </>
  );
}

function JobSummary({ job }: { job: Job }) {
  const st = jobState(job.status?.state);
  const canStop = useCan('stop-job', { jobId: job.id });
  const spec = job.spec ?? {};
  return (
    <section class="card" aria-label="Summary">
      <dl class="facts">
        <Fact k="Type" v={jobType(spec.type)} />
        <Fact k="Pool" v={<Link to="/pools">{spec.pool || '/'}</Link>} />
        <Fact k="Instances" v={fmtNum(spec.instances ?? 0)} />
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
          body={<p>Every task of the job is killed; the job ends KILLED unless it finishes first.</p>}
          danger
          disabled={TERMINAL_JOB.has(st) || st === 'KILLING'}
          action={() => api.stopJob(job.id)}
        />}
      </div>
    </section>
  );
}

export function Fact({ k, v }: { k: string; v: preact.ComponentChildren }) {
  return (
    <div class="fact">
      <dt>{k}</dt>
      <dd>{v}</dd>
    </div>
  );
}

function PendingReasons({ job, waiting, total }: { job?: Job; waiting: Task[]; total: number }) {
  const groups = new Map<string, { n: number; instances: number[]; state: string }>();
  for (const t of waiting) {
    const why = t.message || t.reason || (taskState(t.state) === 'PENDING' ? 'waiting for admission in its pool' : 'waiting');
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

function TaskTable({ jobId, tasks }: { jobId: string; tasks: Task[] }) {
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
            const s = taskState(t.state);
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
                  {t.reason}
                  {t.message && <span class="muted"> {t.message}</span>}
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

function JobEvents({ jobId, live }: { jobId: string; live: PelotonEvent[] }) {
  const [limit, setLimit] = useState(200);
  const stored = useLoad((s) => api.events(jobId, { limit }, s), [jobId, limit]);
  const seen = new Set(live.map((e) => e.seq));
  const old = (stored.data?.events ?? []).filter((e) => !seen.has(e.seq)).reverse();
  const all = [...live, ...old];
  return (
    <Section title="Events" id="events">
      <ErrorNote error={stored.error} />
      <EventList events={all} jobId={jobId} />
      {stored.data?.more && (
        <button type="button" onClick={() => setLimit((l) => Math.min(10000, l * 5))}>
          Read more of the stored history
        </button>
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
          {events.slice(0, 300).map((ev) => (
            <tr key={ev.seq}>
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
