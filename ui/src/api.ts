// The HTTP/JSON API of api/peloton/v1 (protobuf JSON: camelCase fields,
// enums as names, 64-bit integers as strings, unset fields left out). Only
// the fields the UI reads are declared.
import { authHeaders, unauthorized } from './session';

export interface Resources {
  cpu?: number;
  memMb?: number;
  diskMb?: number;
  gpu?: number;
}

export interface JobStatus {
  state?: string;
  taskStates?: Record<string, number>;
  createTime?: string;
  startTime?: string;
  completionTime?: string;
  region?: string;
  message?: string;
  updateId?: string;
  /** Where a region failover (or a failback) moved the job's work. */
  movedTo?: JobMove;
  /** Where a relocated job's work came from. */
  movedFrom?: JobMove;
  /** A periodic job's schedule state. */
  periodic?: PeriodicStatus;
  /** The periodic job a run was launched by. */
  runOf?: RunOf;
}

/** When a periodic job launches its runs (JobSpec.schedule). */
export interface Schedule {
  /** Five-field cron expression, or @hourly, @daily and the like. */
  cron?: string;
  /** IANA time zone; empty: UTC. */
  timeZone?: string;
  /** CONCURRENCY_POLICY_ names; unset: ALLOW. */
  concurrencyPolicy?: string;
  /** 0: only the latest missed tick is launched, however late. */
  startingDeadlineSeconds?: number;
  /** Finished runs kept; 0 means 3. */
  keepRuns?: number;
}

/** A periodic job's schedule state; 64-bit counts come as strings. */
export interface PeriodicStatus {
  suspended?: boolean;
  /** Unset while suspended or stopped. */
  nextRunTime?: string;
  lastTickTime?: string;
  /** The latest run launched, by a tick or by hand. */
  lastRunId?: string;
  /** Ticks that launched a run, were skipped (FORBID) or passed their deadline. */
  launched?: number | string;
  skipped?: number | string;
  missed?: number | string;
  /** Runs not finished yet (GetJob only). */
  activeRuns?: number;
}

/** A run's link to the periodic job that launched it. */
export interface RunOf {
  jobId?: string;
  /** Unset for a run launched by hand. */
  tickTime?: string;
}

export interface JobMove {
  region?: string;
  /** Empty when nothing was left to run. */
  jobId?: string;
  time?: string;
}

export interface JobSpec {
  name?: string;
  type?: string;
  pool?: string;
  region?: string;
  priority?: number;
  preemptible?: boolean;
  instances?: number;
  maxRunning?: number;
  labels?: Record<string, string>;
  task?: { command?: string; args?: string[]; resources?: Resources };
  /** Set: the job is periodic, its runs are jobs of their own. */
  schedule?: Schedule;
  [key: string]: unknown;
}

export interface Job {
  id: string;
  spec?: JobSpec;
  status?: JobStatus;
  configVersion?: string;
}

export interface Task {
  jobId?: string;
  instance?: number;
  state?: string;
  goalState?: string;
  run?: number;
  host?: string;
  cluster?: string;
  reason?: string;
  message?: string;
  exitCode?: number;
  startTime?: string;
  completionTime?: string;
  updateTime?: string;
  configVersion?: string;
  health?: string;
  ready?: string;
  ports?: Record<string, number>;
  pinnedHost?: string;
  retryAfter?: string;
}

export interface HostPoolMove {
  hostId?: string;
  from?: string;
  to?: string;
  phase?: string;
  reason?: string;
  region?: string;
}

export interface PelotonEvent {
  seq?: string;
  time?: string;
  jobId?: string;
  job?: JobStatus;
  task?: Task;
  hostPoolMove?: HostPoolMove;
}

export interface Update {
  id: string;
  jobId?: string;
  fromVersion?: string;
  toVersion?: string;
  batchSize?: number;
  state?: string;
  instancesTotal?: number;
  instancesDone?: number;
  instancesFailed?: number;
  instancesInFlight?: number;
  maxFailures?: number;
  paused?: boolean;
  createTime?: string;
  completionTime?: string;
  message?: string;
  canary?: number;
  autoPromoteAfterSeconds?: number;
  canaryExtra?: boolean;
  promoted?: boolean;
  promotedBy?: string;
}

export interface PoolResource {
  name: string;
  reservation?: number | string;
  limit?: number | string;
  share?: number | string;
  demand?: number | string;
  allocation?: number | string;
  entitlement?: number | string;
  /** What the pool's work asks for before the reservation and limit cap it. */
  uncappedDemand?: number | string;
}

/** A pool's figures over time as its region's server sampled them. */
export interface PoolHistory {
  path?: string;
  region?: string;
  /** Durations as protobuf JSON gives them, such as "86400s". */
  window?: string;
  interval?: string;
  /** Unix seconds; each sample stands for stepSeconds from then. */
  times?: number[];
  stepSeconds?: number[];
  resources?: {
    name: string;
    reservation?: number[];
    /** -1: no limit. */
    limit?: number[];
    demand?: number[];
    uncappedDemand?: number[];
    allocation?: number[];
    entitlement?: number[];
  }[];
  pendingTasks?: number[];
  runningTasks?: number[];
}

/** Each region's health over time as the server answering saw it. */
export interface RegionHistory {
  name: string;
  times?: number[];
  stepSeconds?: number[];
  /** Fractions of each step's samples (0 to 1). */
  alive?: number[];
  suspect?: number[];
  failed?: number[];
  reachableMembers?: number[];
}

export interface PoolRegionShare {
  region?: string;
  reservation?: Resources;
  limit?: Resources;
  demand?: Resources;
}

/** Absent amounts of limit are unlimited; absent shares are 1. */
export interface PoolSpec {
  path: string;
  reservation?: Resources;
  limit?: Resources;
  share?: Resources;
  [key: string]: unknown;
}

/** How UpdateJob rolls a new spec out (query parameters of the call). */
export interface UpdateOptions {
  batchSize?: number;
  maxFailures?: number;
  rollbackOnFailure?: boolean;
  startPaused?: boolean;
  minHealthySeconds?: number;
  inPlace?: boolean;
  /** Instances moved first; the rest wait for the promotion. */
  canary?: number;
  autoPromoteAfterSeconds?: number;
  /** The canaries are extra instances beside the job's. */
  canaryExtra?: boolean;
}

export interface Pool {
  path: string;
  resources?: PoolResource[];
  children?: string[];
  jobs?: number;
  spec?: PoolSpec & { hostPools?: string[] };
  regions?: PoolRegionShare[];
  /** Tasks not yet given a host, and running, the children's included. */
  pendingTasks?: number;
  runningTasks?: number;
}

export interface Host {
  id: string;
  hostname?: string;
  cluster?: string;
  kind?: string;
  state?: string;
  capacity?: Resources;
  allocated?: Resources;
  labels?: Record<string, string>;
  tasks?: number;
  draining?: boolean;
  drainReason?: string;
  drainTime?: string;
  /** When batch runs still on the draining host are killed to run elsewhere. */
  drainDeadline?: string;
  lastSeen?: string;
  region?: string;
  hostPool?: string;
  hostPoolTarget?: string;
}

export interface RegionMember {
  name?: string;
  address?: string;
  role?: string;
  leader?: boolean;
  status?: string;
  /** The answering server's gossip probes of the member over a window. */
  probes?: { sent?: number; lost?: number; failed?: number; window?: string };
}

export interface Region {
  name: string;
  health?: string;
  members?: RegionMember[];
  capacity?: Resources;
  allocation?: Resources;
  lastSeen?: string;
}

export interface PlannedMove {
  jobId?: string;
  jobName?: string;
  toRegion?: string;
  reason?: string;
}

export interface RegionPlan {
  region?: string;
  moves?: PlannedMove[];
  unplaced?: PlannedMove[];
  pinned?: number;
}

/** One job of a migration with its progress and report. */
export interface MigrationJob {
  jobId?: string;
  type?: string;
  fromCluster?: string;
  instances?: number;
  moved?: number;
  inFlight?: number;
  maxUnavailable?: number;
  slaMaxUnavailable?: number;
  failures?: number;
  retries?: number;
  surge?: number;
  done?: boolean;
  message?: string;
}

export interface Migration {
  id: string;
  jobId?: string;
  pool?: string;
  toCluster?: string;
  batchSize?: number;
  surge?: boolean;
  moveRunning?: boolean;
  allowStateful?: boolean;
  paused?: boolean;
  state?: string;
  message?: string;
  createTime?: string;
  completionTime?: string;
  /** protobuf JSON duration: "12.5s". */
  duration?: string;
  jobs?: MigrationJob[];
  instancesTotal?: number;
  instancesMoved?: number;
  instancesInFlight?: number;
  region?: string;
}

export type MigrationAction = 'pause' | 'resume' | 'abort' | 'rollback';
export type UpdateAction = 'pause' | 'resume' | 'rollback' | 'abort' | 'promote';

export interface Drill {
  id: string;
  region?: string;
  state?: string;
  startTime?: string;
  endTime?: string;
  detectionSeconds?: number;
  relocationSeconds?: number;
  failbackSeconds?: number;
  moved?: PlannedMove[];
  notMoved?: PlannedMove[];
  message?: string;
}

/** What a call says when no answer came: the server is down or out of reach. */
export const UNREACHABLE = 'Cannot reach the server: it is down, restarting or out of reach. The page tries again by itself.';

let reachable = true;
const reachListeners = new Set<(ok: boolean) => void>();

/** setReachable records whether the last call got an answer, and tells who listens when that changes. */
export function setReachable(ok: boolean) {
  if (ok === reachable) return;
  reachable = ok;
  reachListeners.forEach((l) => l(ok));
}

/** onReachable calls fn whenever the server stops or starts answering; it returns the unsubscribe. */
export function onReachable(fn: (ok: boolean) => void): () => void {
  reachListeners.add(fn);
  return () => reachListeners.delete(fn);
}

export const isReachable = () => reachable;

/** ApiError carries the HTTP status and the gRPC status message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function call<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const init: RequestInit = { method, signal, headers: { Accept: 'application/json', ...authHeaders() } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['Content-Type'] = 'application/json';
  }
  let resp: Response;
  try {
    resp = await fetch(path, init);
  } catch (e) {
    if (signal?.aborted) throw e;
    // fetch fails this way only when no answer came at all.
    setReachable(false);
    throw new ApiError(0, UNREACHABLE);
  }
  setReachable(true);
  const text = await resp.text();
  if (!resp.ok) {
    let message = text;
    try {
      message = (JSON.parse(text) as { message?: string }).message ?? text;
    } catch {
      // not JSON: keep the text
    }
    if (resp.status === 401) unauthorized(message || resp.statusText);
    throw new ApiError(resp.status, message || resp.statusText);
  }
  return (text ? JSON.parse(text) : {}) as T;
}

export const get = <T>(path: string, signal?: AbortSignal) => call<T>('GET', path, undefined, signal);
export const post = <T>(path: string, body: unknown = {}) => call<T>('POST', path, body);
export const put = <T>(path: string, body: unknown = {}) => call<T>('PUT', path, body);

/** Query string from the defined values; arrays repeat the key. */
export function query(params: Record<string, string | number | boolean | string[] | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === '' || v === false) continue;
    if (Array.isArray(v)) v.forEach((x) => q.append(k, x));
    else q.set(k, String(v));
  }
  const s = q.toString();
  return s ? '?' + s : '';
}

const enc = encodeURIComponent;
/** Host ids hold a "/" (cluster/name) that the route keeps as is. */
export const hostPath = (id: string) => id.split('/').map(enc).join('/');

/** Job states that are not terminal, as the API names them. */
const ACTIVE_JOB_STATES = ['INITIALIZED', 'PENDING', 'RUNNING', 'KILLING'].map((s) => 'JOB_STATE_' + s);

/**
 * The newest `limit` jobs in the given states (JOB_STATES names), with how
 * many there are and their tasks by state, counted by the server on all
 * pages (ListJobs with count_total): a summary of every job for the price
 * of one page.
 */
async function jobCounts(states: string[], limit: number, signal?: AbortSignal) {
  const r = await get<{ jobs?: Job[]; total?: number; taskStates?: Record<string, number> }>(
    '/v1/jobs' + query({ states: states.map((x) => 'JOB_STATE_' + x), order: 'JOB_ORDER_NEWEST_FIRST', limit, countTotal: true }),
    signal,
  );
  return { jobs: r.jobs ?? [], total: Number(r.total ?? 0), taskStates: r.taskStates ?? {} };
}

/** What a page of the job list asks ListJobs for. */
export interface JobPageQuery {
  /** JOB_STATES names, without their prefix; none: any state. */
  states?: string[];
  pool?: string;
  /** A part of the name or id, ignoring case. */
  search?: string;
  newestFirst: boolean;
  /** The next_page_token of the page before; none: the first page. */
  pageToken?: string;
  limit: number;
}

/** One page of jobs and how many match in all (ListJobs with count_total). */
async function jobPage(q: JobPageQuery, signal?: AbortSignal) {
  const r = await get<{ jobs?: Job[]; nextPageToken?: string; total?: number }>(
    '/v1/jobs' +
      query({
        states: q.states?.map((x) => 'JOB_STATE_' + x),
        pool: q.pool,
        search: q.search,
        order: q.newestFirst ? 'JOB_ORDER_NEWEST_FIRST' : 'JOB_ORDER_OLDEST_FIRST',
        pageToken: q.pageToken,
        limit: q.limit,
        countTotal: true,
      }),
    signal,
  );
  return { jobs: r.jobs ?? [], next: r.nextPageToken || undefined, total: Number(r.total ?? 0) };
}

/** Time windows, in seconds back from now, in which newestEvents looks. */
const EVENT_WINDOWS = [60, 600, 3600, 6 * 3600, 86400, 7 * 86400];
/** Most pages of 1,000 events newestEvents reads in one window. */
const EVENT_PAGES = 20;

/**
 * The newest n stored events of a job (of one task with instance), oldest
 * first. ListEvents reads forwards from after_seq only; a region numbers
 * its events never below their time in microseconds, so events after
 * "seq = a time" include every event since that time: the window grows
 * from a minute back until it holds n events (or reaches the start).
 * `older` says whether events before the ones returned may exist.
 */
async function newestEvents(id: string, p: { instance?: number; n: number }, signal?: AbortSignal) {
  const windows: (number | undefined)[] = [...EVENT_WINDOWS, undefined];
  for (const w of windows) {
    const after = w === undefined ? undefined : String(Math.max(0, Date.now() - w * 1000) * 1000);
    let events: PelotonEvent[] = [];
    let afterSeq = after;
    let more = true;
    for (let page = 0; more && page < EVENT_PAGES; page++) {
      const r = await get<{ events?: PelotonEvent[]; more?: boolean }>(
        `/v1/jobs/${enc(id)}/events` + query({ instance: p.instance, afterSeq, limit: 1000 }),
        signal,
      );
      events = events.concat(r.events ?? []).slice(-p.n);
      more = !!r.more && (r.events?.length ?? 0) > 0;
      afterSeq = r.events?.length ? r.events[r.events.length - 1].seq : afterSeq;
    }
    if (events.length >= p.n || w === undefined) return { events, older: w !== undefined || events.length >= p.n };
  }
  return { events: [] as PelotonEvent[], older: false };
}

export const api = {
  jobCounts: (states: string[], limit: number, signal?: AbortSignal) => jobCounts(states, limit, signal),
  jobPage: (q: JobPageQuery, signal?: AbortSignal) => jobPage(q, signal),
  job: (id: string, signal?: AbortSignal) => get<{ job: Job }>(`/v1/jobs/${enc(id)}`, signal),
  tasks: (id: string, p: { states?: string[]; offset?: number; limit?: number }, signal?: AbortSignal) =>
    get<{ tasks?: Task[]; total?: number }>(`/v1/jobs/${enc(id)}/tasks` + query(p), signal),
  task: (id: string, instance: number, signal?: AbortSignal) =>
    get<{ task: Task }>(`/v1/jobs/${enc(id)}/tasks/${instance}`, signal),
  logs: (id: string, instance: number, p: { stream?: string; offset?: number; limit?: number; run?: number }) =>
    get<{ data?: string; nextOffset?: string; size?: string }>(`/v1/jobs/${enc(id)}/tasks/${instance}/logs` + query(p)),
  config: (id: string, version?: number, signal?: AbortSignal) =>
    get<{ spec?: JobSpec; version?: string; versions?: string[] }>(`/v1/jobs/${enc(id)}/config` + query({ version }), signal),
  newestEvents: (id: string, p: { instance?: number; n: number }, signal?: AbortSignal) => newestEvents(id, p, signal),
  updates: (id: string, signal?: AbortSignal) => get<{ updates?: Update[] }>(`/v1/jobs/${enc(id)}/updates`, signal),
  update: (id: string, signal?: AbortSignal) => get<{ update: Update }>(`/v1/updates/${enc(id)}`, signal),
  updateAction: (id: string, action: UpdateAction) =>
    post<{ update: Update }>(`/v1/updates/${enc(id)}:${action}`),
  stopJob: (id: string) => post<{ job: Job }>(`/v1/jobs/${enc(id)}/stop`),
  /** A periodic job's runs, newest first (one page of up to limit). */
  runs: (id: string, limit: number, signal?: AbortSignal) =>
    get<{ jobs?: Job[]; nextPageToken?: string }>('/v1/jobs' + query({ runOf: id, order: 'JOB_ORDER_NEWEST_FIRST', limit }), signal),
  suspendJob: (id: string) => post<{ job: Job }>(`/v1/jobs/${enc(id)}/suspend`),
  resumeJob: (id: string) => post<{ job: Job }>(`/v1/jobs/${enc(id)}/resume`),
  /** Launches a run of a periodic job now and answers it. */
  runJob: (id: string) => post<{ run: Job }>(`/v1/jobs/${enc(id)}/run`),
  createJob: (spec: JobSpec) => post<{ job: Job }>('/v1/jobs', spec),
  updateJob: (id: string, spec: JobSpec, opts: UpdateOptions) => post<{ update: Update }>(`/v1/jobs/${enc(id)}/updates` + query({ ...opts }), spec),
  stopTasks: (id: string, instances: number[], force: boolean) =>
    post<{ tasks?: Task[] }>(`/v1/jobs/${enc(id)}/tasks/stop`, { instances, force }),
  restartTasks: (id: string, instances: number[], force: boolean) =>
    post<{ tasks?: Task[] }>(`/v1/jobs/${enc(id)}/tasks/restart`, { instances, force }),
  pools: (signal?: AbortSignal) => get<{ pools?: Pool[] }>('/v1/pools', signal),
  pool: (path: string, signal?: AbortSignal) =>
    get<{ pool: Pool }>(`/v1/pools/${path.replace(/^\//, '').split('/').map(enc).join('/')}?regions=true`, signal),
  poolHistory: (path: string, since: Date | undefined, signal?: AbortSignal) =>
    get<PoolHistory>(
      `/v1/history/pools/${path.replace(/^\//, '').split('/').map(enc).join('/')}` + query({ since: since?.toISOString() }),
      signal,
    ),
  regionHistory: (since: Date | undefined, signal?: AbortSignal) =>
    get<{ regions?: RegionHistory[]; window?: string; interval?: string }>('/v1/history/regions' + query({ since: since?.toISOString() }), signal),
  hosts: (signal?: AbortSignal) => get<{ hosts?: Host[] }>('/v1/hosts', signal),
  /** deadline in seconds: batch runs still there after it are killed to run elsewhere. */
  drain: (h: Host, reason: string, deadline?: number) =>
    post<{ host: Host }>(`/v1/hosts/${hostPath(h.id)}:drain`, { reason, region: h.region, deadline: deadline ? `${deadline}s` : undefined }),
  undrain: (h: Host) => post<{ host: Host }>(`/v1/hosts/${hostPath(h.id)}:undrain`, { region: h.region }),
  markDown: (h: Host, force: boolean) => post<{ host: Host }>(`/v1/hosts/${hostPath(h.id)}:down`, { region: h.region, force }),
  updatePool: (spec: PoolSpec) => put<{ pool: Pool }>('/v1/pools', spec),
  regions: (signal?: AbortSignal) => get<{ regions?: Region[] }>('/v1/regions', signal),
  plan: (signal?: AbortSignal) => get<{ plans?: RegionPlan[] }>('/v1/regions/plan', signal),
  drills: (signal?: AbortSignal) => get<{ drills?: Drill[] }>('/v1/drills', signal),
  migrations: (signal?: AbortSignal) => get<{ migrations?: Migration[] }>('/v1/migrations', signal),
  migration: (id: string, region?: string, signal?: AbortSignal) =>
    get<{ migration: Migration }>(`/v1/migrations/${enc(id)}` + query({ region }), signal),
  migrationAction: (m: Migration, action: MigrationAction) =>
    post<{ migration: Migration }>(`/v1/migrations/${enc(m.id)}:${action}`, { region: m.region }),
  /** Jobs a failover moved here from another region that still run. */
  relocated: (signal?: AbortSignal) =>
    get<{ jobs?: Job[] }>(
      '/v1/jobs' + query({ labels: 'peloton.relocated-from', states: ACTIVE_JOB_STATES, limit: 5000 }),
      signal,
    ),
  failBack: (region: string) =>
    post<{ moved?: PlannedMove[]; notMoved?: PlannedMove[] }>(`/v1/regions/${enc(region)}/failback`),
  startDrill: (region: string, durationSeconds: number) =>
    post<{ drill: Drill }>('/v1/drills', { region, durationSeconds }),
  version: () => get<{ version?: string; region?: string }>('/v1/version'),
};
