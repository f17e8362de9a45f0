// Small hooks and formatting shared by the pages.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { onReachable, type Job, type Resources, type Task } from './api';

export interface Loaded<T> {
  data?: T;
  error?: string;
  loading: boolean;
  /** reload reads again, keeping what is shown until the answer comes. */
  reload: () => void;
  set: (d: T) => void;
}

/** useLoad runs load when deps change and whenever reload is called. */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    const c = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    loadRef
      .current(c.signal)
      .then((data) => !c.signal.aborted && setState({ data, loading: false }))
      .catch((e: unknown) => {
        if (!c.signal.aborted) setState((s) => ({ ...s, error: String((e as Error)?.message ?? e), loading: false }));
      });
    return () => c.abort();
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  // A read that failed because the server was out of reach is read again
  // once the server answers again.
  const failed = useRef(false);
  failed.current = !!state.error;
  useEffect(() => onReachable((ok) => ok && failed.current && reload()), []);
  const set = useCallback((data: T) => setState({ data, loading: false }), []);
  return { ...state, reload, set };
}

/** useInterval calls fn every ms while mounted (and the tab is visible). */
export function useInterval(fn: () => void, ms: number) {
  const ref = useRef(fn);
  ref.current = fn;
  useEffect(() => {
    const id = window.setInterval(() => {
      if (document.visibilityState !== 'hidden') ref.current();
    }, ms);
    return () => window.clearInterval(id);
  }, [ms]);
}

/** Enum names without their prefix: TASK_STATE_RUNNING → RUNNING. */
export function enumName(v: string | undefined, prefix: string): string {
  if (!v) return '';
  return v.startsWith(prefix) ? v.slice(prefix.length) : v;
}

export const taskState = (s?: string) => enumName(s, 'TASK_STATE_') || 'UNSPECIFIED';
export const jobState = (s?: string) => enumName(s, 'JOB_STATE_') || 'UNSPECIFIED';
export const hostState = (s?: string) => enumName(s, 'HOST_STATE_') || 'UNSPECIFIED';
export const updateState = (s?: string) => enumName(s, 'UPDATE_STATE_') || 'UNSPECIFIED';
export const migrationState = (s?: string) => enumName(s, 'MIGRATION_STATE_') || 'UNSPECIFIED';
export const jobType = (s?: string) => enumName(s, 'JOB_TYPE_').toLowerCase() || 'batch';
export const health = (s?: string) => enumName(s, 'HEALTH_STATE_');

export const TERMINAL_TASK = new Set(['SUCCEEDED', 'FAILED', 'KILLED', 'LOST']);
export const TERMINAL_JOB = new Set(['SUCCEEDED', 'FAILED', 'KILLED']);
export const WAITING_TASK = ['INITIALIZED', 'PENDING', 'READY', 'PLACING', 'PLACED'];
export const ACTIVE_UPDATE = new Set(['ROLLING_FORWARD', 'ROLLING_BACK']);
export const ACTIVE_MIGRATION = new Set(['MIGRATING', 'ROLLING_BACK']);

/** Every task state, in lifecycle order. */
export const TASK_STATES = [
  'INITIALIZED',
  'PENDING',
  'READY',
  'PLACING',
  'PLACED',
  'LAUNCHING',
  'RUNNING',
  'SUCCEEDED',
  'FAILED',
  'KILLED',
  'LOST',
];

export const JOB_STATES = ['INITIALIZED', 'PENDING', 'RUNNING', 'KILLING', 'SUCCEEDED', 'FAILED', 'KILLED'];

/** The CSS class of a state's colour. */
export function stateTone(s: string): string {
  switch (s) {
    case 'RUNNING':
    case 'UP':
    case 'ALIVE':
    case 'HEALTHY':
    case 'ROLLING_FORWARD':
    case 'MIGRATING':
    case 'COMPLETED':
      return 'tone-run';
    case 'SUCCEEDED':
      return 'tone-ok';
    case 'FAILED':
    case 'LOST':
    case 'DOWN':
    case 'UNHEALTHY':
    case 'DEAD':
    case 'ROLLED_BACK':
      return 'tone-bad';
    case 'KILLED':
    case 'KILLING':
    case 'ABORTED':
    case 'DRAINED':
      return 'tone-off';
    case 'DRAINING':
    case 'SUSPECT':
    case 'ROLLING_BACK':
    case 'HEALED':
      return 'tone-warn';
    default:
      return 'tone-wait';
  }
}

export function num(v: number | string | undefined): number {
  if (v === undefined) return 0;
  if (typeof v === 'number') return v;
  if (v === 'Infinity') return Infinity;
  const n = Number(v);
  return Number.isNaN(n) ? 0 : n;
}

export function fmtNum(v: number, digits = 1): string {
  if (!Number.isFinite(v)) return '∞';
  if (Number.isInteger(v)) return v.toLocaleString('en-US');
  return v.toLocaleString('en-US', { maximumFractionDigits: digits });
}

export function fmtMem(mb: number | undefined): string {
  const v = mb ?? 0;
  if (!Number.isFinite(v)) return '∞';
  if (v >= 1024 * 1024) return fmtNum(v / 1024 / 1024) + ' TiB';
  if (v >= 1024) return fmtNum(v / 1024) + ' GiB';
  return fmtNum(v) + ' MiB';
}

/** Amount of one resource as the pools show it: cores, MiB, devices. */
export function fmtResource(name: string, v: number): string {
  if (name === 'mem' || name === 'disk') return fmtMem(v);
  return fmtNum(v, 2);
}

export function fmtResources(r?: Resources): string {
  const parts = [`${fmtNum(r?.cpu ?? 0, 2)} cpu`, fmtMem(r?.memMb)];
  if (r?.gpu) parts.push(`${r.gpu} gpu`);
  return parts.join(' · ');
}

export function fmtTime(t?: string): string {
  if (!t) return '';
  const d = new Date(t);
  if (Number.isNaN(d.getTime())) return t;
  return d.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' });
}

export function fmtAgo(t?: string, now = Date.now()): string {
  if (!t) return '';
  const s = Math.round((now - new Date(t).getTime()) / 1000);
  // A time a little ahead of this browser's clock is the server's clock
  // running ahead, not the future: what was seen was seen just now.
  if (s <= 0) return 'just now';
  return fmtDuration(s) + ' ago';
}

/** fmtUntil says how far ahead t is: "in 5m", or "now" once it has come. */
export function fmtUntil(t?: string, now = Date.now()): string {
  if (!t) return '';
  const s = Math.round((new Date(t).getTime() - now) / 1000);
  return s <= 0 ? 'now' : 'in ' + fmtDuration(s);
}

export function fmtDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '';
  if (seconds < 10) return `${Math.round(seconds * 10) / 10}s`;
  if (seconds < 90) return `${Math.round(seconds)}s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)}m`;
  if (seconds < 172800) return `${Math.round(seconds / 3600)}h`;
  return `${Math.round(seconds / 86400)}d`;
}

/**
 * shortId is the end of an id: job ids are UUIDs of version 7, whose first
 * digits are the time they were made (the same for every job of a minute)
 * and whose last 12 digits are random.
 */
export function shortId(id?: string): string {
  if (!id) return '';
  return id.length > 12 ? '…' + id.slice(-12) : id;
}

/** base64 (protobuf JSON bytes) to text. */
export function decodeBytes(b64?: string): string {
  if (!b64) return '';
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return new TextDecoder().decode(bytes);
}

/** Task states that hold (or wait for) a place in the job's maxRunning. */
const ACTIVE_TASK = ['PENDING', 'READY', 'PLACING', 'PLACED', 'LAUNCHING', 'RUNNING'];

/** Tasks of the job that count against its maxRunning. */
export function activeTasks(job?: Job): number {
  return ACTIVE_TASK.reduce((a, s) => a + (job?.status?.taskStates?.[s] ?? 0), 0);
}

/**
 * whyWaiting says why a waiting task waits, in words: the server's reason
 * when it gives one; else a retry's backoff, the job's maxRunning, or its
 * pool's admission.
 */
export function whyWaiting(t: Task, job: Job | undefined, now = Date.now()): string {
  if (t.message || t.reason) return t.message || t.reason || '';
  const s = taskState(t.state);
  if (s === 'PENDING') return 'waiting for admission in its pool';
  if (s !== 'INITIALIZED') return 'waiting';
  if (t.retryAfter && new Date(t.retryAfter).getTime() > now) return 'waiting to be retried (backoff after a failed run)';
  const max = job?.spec?.maxRunning ?? 0;
  if (max > 0) return `held by the job's maxRunning: at most ${fmtNum(max)} ${max === 1 ? 'task' : 'tasks'} at once (${fmtNum(activeTasks(job))} now)`;
  return 'waiting to be queued';
}

/** Reasons a run ended with: on a task running again they tell of a past run. */
const RUN_END_REASONS = new Set([
  'EXIT_ZERO',
  'EXIT_NONZERO',
  'KILLED_BY_USER',
  'PREEMPTED',
  'HOST_LOST',
  'LAUNCH_FAILED',
  'UNKNOWN_TO_HOST_MANAGER',
  'RETRYING',
  'UNHEALTHY',
  'HOST_GONE',
]);

/** What of a task is true now: the API's record keeps fields of past runs. */
export interface TaskView {
  state: string;
  /** The goal, when it says something the state does not. */
  goal?: string;
  /** Why it is in its state, and the detail. */
  reason?: string;
  message?: string;
  /** How a previous run ended, for a task that runs again. */
  previous?: string;
  /** When a waiting retry may start. */
  retryAfter?: string;
  /** Why a waiting task waits. */
  waiting?: string;
}

export function taskView(t: Task, job: Job | undefined, now = Date.now()): TaskView {
  const state = taskState(t.state);
  const out: TaskView = { state };
  const goal = taskState(t.goalState);
  const batch = jobType(job?.spec?.type) === 'batch';
  // Services run until stopped: their only goal worth telling is KILLED.
  if (t.goalState && goal !== state && (batch || goal === 'KILLED')) out.goal = goal;
  const live = ['PLACED', 'LAUNCHING', 'RUNNING'].includes(state);
  if (live && t.reason && RUN_END_REASONS.has(t.reason)) {
    if ((t.run ?? 1) > 1) out.previous = [t.reason, t.message].filter(Boolean).join(': ');
  } else {
    out.reason = t.reason;
    out.message = t.message;
  }
  if (!TERMINAL_TASK.has(state) && t.retryAfter && new Date(t.retryAfter).getTime() > now) out.retryAfter = t.retryAfter;
  if (WAITING_TASK.includes(state)) out.waiting = whyWaiting(t, job, now);
  return out;
}

/**
 * sortRows sorts rows in place by `sort`, a key of keys ("created") or one
 * with a "-" for descending; an unknown key sorts by fallback. Numbers
 * compare as numbers, text in natural order ("sim-2" before "sim-10");
 * rows that compare equal are ordered by tie.
 */
export function sortRows<T>(rows: T[], keys: Record<string, (r: T) => string | number>, sort: string, fallback: string, tie: (a: T, b: T) => number): T[] {
  const desc = sort.startsWith('-');
  const key = keys[sort.replace(/^-/, '')] ?? keys[fallback];
  return rows.sort((a, b) => {
    const x = key(a);
    const y = key(b);
    const c = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y), undefined, { numeric: true });
    return (desc ? -c : c) || tie(a, b);
  });
}
