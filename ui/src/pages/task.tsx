// A task: its current run, its history from the job's events, its logs
// (the tail, and followed as they grow), its host and ports.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type PelotonEvent } from '../api';
import { Badge, Empty, ErrorNote, Section, Title } from '../components';
import { useEvents } from '../events';
import { Link } from '../router';
import { decodeBytes, fmtTime, health, taskState, useInterval, useLoad } from '../util';
import { EventList, Fact } from './job';

/** Bytes of log read at first: the tail. */
const TAIL = 16 * 1024;
/** Most bytes kept on the page while following. */
const KEEP = 256 * 1024;

export function TaskPage({ id, instance }: { id: string; instance: number }) {
  const task = useLoad((s) => api.task(id, instance, s).then((r) => r.task), [id, instance]);
  const history = useLoad((s) => api.events(id, { instance, limit: 1000 }, s), [id, instance]);
  const [live, setLive] = useState<PelotonEvent[]>([]);
  useEvents((ev) => {
    if (ev.jobId !== id || !ev.task || (ev.task.instance ?? 0) !== instance) return;
    task.set(ev.task);
    setLive((l) => [ev, ...l].slice(0, 500));
  });
  const t = task.data;
  const s = taskState(t?.state);
  const seen = new Set(live.map((e) => e.seq));
  const events = [...live, ...(history.data?.events ?? []).filter((e) => !seen.has(e.seq) && e.task).reverse()];
  return (
    <>
      <Title
        sub={
          <>
            <Link to={`/jobs/${encodeURIComponent(id)}`}>job {id}</Link>
          </>
        }
      >
        Task {instance} {t && <Badge state={s} />}
      </Title>
      <ErrorNote error={task.error} />
      {t && (
        <section class="card" aria-label="Current run">
          <dl class="facts">
            <Fact k="State" v={`${s} (goal ${taskState(t.goalState)})`} />
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
            {t.retryAfter && <Fact k="Retry after" v={fmtTime(t.retryAfter)} />}
          </dl>
          {(t.reason || t.message) && (
            <p class="note" data-testid="task-reason">
              <strong>{t.reason}</strong> {t.message}
            </p>
          )}
        </section>
      )}
      <Logs id={id} instance={instance} runs={t?.run ?? 1} />
      <Section title="History" id="history">
        <ErrorNote error={history.error} />
        {events.length === 0 ? <Empty>No event.</Empty> : <EventList events={events} jobId={id} />}
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
  const next = useRef<number | undefined>(undefined);
  const pre = useRef<HTMLPreElement>(null);

  useEffect(() => {
    next.current = undefined;
    setText('');
    setError(undefined);
    api
      .logs(id, instance, { stream, run: run || undefined, offset: -TAIL })
      .then((r) => {
        setText(decodeBytes(r.data));
        next.current = Number(r.nextOffset ?? 0);
      })
      .catch((e: Error) => setError(e.message));
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
      <pre class="logs" ref={pre} tabIndex={0} aria-label={`${stream} of task ${instance}`} data-testid="logs">
        {text || (error ? '' : '(empty)')}
      </pre>
    </Section>
  );
}
