// A task: its current run, its history from the job's events, its logs
// (the tail, and followed as they grow), its host and ports.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type ApiError, type PelotonEvent } from '../api';
import { Badge, Empty, ErrorNote, Fact, JobRef, Section, Title } from '../components';
import { useEvents } from '../events';
import { Link } from '../router';
import { TERMINAL_TASK, decodeBytes, fmtTime, health, taskView, useInterval, useLoad } from '../util';
import { RestartTask, StopTask } from './job-actions';
import { EventList } from './job';

/** Bytes of log read at first: the tail. */
const TAIL = 16 * 1024;
/** Most bytes kept on the page while following. */
const KEEP = 256 * 1024;

export function TaskPage({ id, instance }: { id: string; instance: number }) {
  const task = useLoad((s) => api.task(id, instance, s).then((r) => r.task), [id, instance]);
  const job = useLoad((s) => api.job(id, s).then((r) => r.job), [id]);
  const history = useLoad((s) => api.newestEvents(id, { instance, n: 500 }, s), [id, instance]);
  const [live, setLive] = useState<PelotonEvent[]>([]);
  useEvents((ev) => {
    if (ev.jobId !== id || !ev.task || (ev.task.instance ?? 0) !== instance) return;
    task.set(ev.task);
    setLive((l) => [ev, ...l].slice(0, 500));
  });
  const t = task.data;
  const v = t && taskView(t, job.data);
  if (task.error && !t) {
    return (
      <>
        <Title sub={<Link to={`/jobs/${encodeURIComponent(id)}`}>job {id}</Link>}>Task {instance}</Title>
        <ErrorNote error={task.error} />
      </>
    );
  }
  const s = v?.state ?? '';
  const seen = new Set(live.map((e) => e.seq));
  const events = [...live, ...(history.data?.events ?? []).filter((e) => !seen.has(e.seq) && e.task).reverse()];
  return (
    <>
      <Title
        sub={
          <>
            of job <JobRef id={id} name={job.data?.spec?.name} />
          </>
        }
      >
        Task {instance} {t && <Badge state={s} />}
      </Title>
      <ErrorNote error={task.error} />
      {t && v && (
        <section class="card" aria-label="Current run">
          <dl class="facts">
            <Fact k="State" v={v.goal ? `${s} (goal ${v.goal})` : s} />
            <Fact k="Run" v={String(t.run ?? 0)} />
            <Fact
              k="Host"
              v={t.host ? <Link to={`/hosts?q=${encodeURIComponent(t.host)}`}>{`${t.cluster ?? ''}/${t.host}`}</Link> : 'none yet'}
            />
            {t.pinnedHost && <Fact k="Pinned to" v={t.pinnedHost} />}
            <Fact
              k="Ports"
              v={
                Object.entries(t.ports ?? {})
                  .map(([k, v]) => `${k}=${v}`)
                  .join(', ') || 'none'
              }
            />
            {health(t.health) && <Fact k="Health" v={<Badge state={health(t.health)} />} />}
            {health(t.ready) && <Fact k="Ready" v={<Badge state={health(t.ready)} />} />}
            {(s === 'FAILED' || s === 'SUCCEEDED') && <Fact k="Exit code" v={String(t.exitCode ?? 0)} />}
            <Fact k="Config version" v={t.configVersion ?? ''} />
            {t.startTime && <Fact k="Started" v={fmtTime(t.startTime)} />}
            {t.completionTime && <Fact k="Ended" v={fmtTime(t.completionTime)} />}
            {v.retryAfter && <Fact k="Retry after" v={fmtTime(v.retryAfter)} />}
            {v.previous && <Fact k="Previous run" v={v.previous} />}
          </dl>
          {v.waiting ? (
            <p class="note" data-testid="task-reason">
              {v.waiting}
            </p>
          ) : (
            (v.reason || v.message) && (
              <p class="note" data-testid="task-reason">
                <strong>{v.reason}</strong> {v.message}
              </p>
            )
          )}
          <div class="actions">
            <RestartTask jobId={id} instance={instance} ended={TERMINAL_TASK.has(s)} />
            <StopTask jobId={id} instance={instance} ended={TERMINAL_TASK.has(s)} />
          </div>
        </section>
      )}
      <Logs id={id} instance={instance} runs={t?.run ?? 1} />
      <Section title="History" id="history">
        <ErrorNote error={history.error} />
        {events.length === 0 ? <Empty>No event.</Empty> : <EventList events={events.slice(0, 200)} jobId={id} />}
      </Section>
    </>
  );
}

function Logs({ id, instance, runs }: { id: string; instance: number; runs: number }) {
  const [stream, setStream] = useState('stdout');
  const [run, setRun] = useState(0);
  const [follow, setFollow] = useState(false);
  const [text, setText] = useState('');
  const [error, setError] = useState<string>();
  const [none, setNone] = useState<string>();
  const next = useRef<number | undefined>(undefined);
  const pre = useRef<HTMLPreElement>(null);

  useEffect(() => {
    next.current = undefined;
    setText('');
    setError(undefined);
    setNone(undefined);
    api
      .logs(id, instance, { stream, run: run || undefined, offset: -TAIL })
      .then((r) => {
        setText(decodeBytes(r.data));
        next.current = Number(r.nextOffset ?? 0);
      })
      .catch((e: ApiError) => {
        // 400: the cluster keeps no logs of its tasks (simulated hosts), or
        // not of this run: a fact of the cluster, not a failure.
        if (e.status === 400) setNone(e.message);
        else setError(e.message);
      });
  }, [id, instance, stream, run]);

  useInterval(() => {
    if (!follow || next.current === undefined) return;
    api
      .logs(id, instance, { stream, run: run || undefined, offset: next.current })
      .then((r) => {
        const more = decodeBytes(r.data);
        next.current = Number(r.nextOffset ?? next.current);
        if (more) setText((t) => (t + more).slice(-KEEP));
      })
      .catch(() => undefined);
  }, 1000);

  useEffect(() => {
    if (follow && pre.current) pre.current.scrollTop = pre.current.scrollHeight;
  }, [text, follow]);

  return (
    <Section
      title="Logs"
      id="logs"
      actions={
        <>
          <label>
            Stream{' '}
            <select value={stream} onChange={(e) => setStream((e.target as HTMLSelectElement).value)}>
              <option value="stdout">stdout</option>
              <option value="stderr">stderr</option>
            </select>
          </label>
          <label>
            Run{' '}
            <select value={run} onChange={(e) => setRun(Number((e.target as HTMLSelectElement).value))}>
              <option value={0}>current</option>
              {Array.from({ length: runs }, (_, i) => i + 1).map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          </label>
          <label class="check">
            <input type="checkbox" checked={follow} onChange={(e) => setFollow((e.target as HTMLInputElement).checked)} /> Follow
          </label>
        </>
      }
    >
      <ErrorNote error={error} />
      {none && (
        <p class="muted" data-testid="no-logs">
          No logs here: {none}
        </p>
      )}
      {!none && <pre class="logs" ref={pre} tabIndex={0} aria-label={`${stream} of task ${instance}`} data-testid="logs">
        {text || (error ? '' : '(empty)')}
      </pre>}
    </Section>
  );
}
