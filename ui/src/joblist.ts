// The list of jobs that the jobs page and the overview show, kept true by
// the event stream: it is read whole once (and again after the stream was
// down, when events may have been missed); after that a job event changes
// the job it names in place, and a job the list has not seen is read alone
// (GET /v1/jobs/{id}), not by reading the whole list again.
import { useEffect, useRef } from 'preact/hooks';
import { api, type Job } from './api';
import { useEvents, useReloadAfterStreamDown } from './events';
import { jobState, useLoad, type Loaded } from './util';

/** Jobs read one by one at most per batch; past it the whole list is read. */
const MAX_SINGLE_READS = 20;
/** How long changed jobs' ids are gathered before they are read. */
const GATHER_MS = 500;
/** The whole list is read at most this often. */
const FULL_EVERY_MS = 10000;

export type JobList = Loaded<{ jobs: Job[]; truncated: boolean }>;

/** matching says whether a job belongs in a list of states (JOB_STATES names; none: any) and pool. */
const matching = (j: Job, states?: string[], pool?: string) =>
  (!states?.length || states.includes(jobState(j.status?.state))) && (!pool || (j.spec?.pool || '/') === pool);

/**
 * useJobList is every job in the given states and pool, followed: a job
 * event sets the job's state at once; the jobs that events name (new ones,
 * and known ones whose tasks changed, for their task counts) are read one
 * by one every half second, or, when more than MAX_SINGLE_READS changed,
 * by reading the whole list again, at most every FULL_EVERY_MS.
 */
export function useJobList(states?: string[], pool?: string): JobList {
  const list = useLoad((s) => api.jobs(states?.map((x) => 'JOB_STATE_' + x), pool, s), [states?.join(), pool]);
  const ref = useRef(list);
  ref.current = list;
  const changed = useRef(new Set<string>());
  const timer = useRef<number | undefined>(undefined);
  const lastFull = useRef(Date.now());
  useEffect(() => () => window.clearTimeout(timer.current), []);

  const schedule = (ms: number) => {
    if (timer.current === undefined) timer.current = window.setTimeout(() => void readChanged(), ms);
  };
  const readChanged = async () => {
    timer.current = undefined;
    if (changed.current.size > MAX_SINGLE_READS) {
      const wait = lastFull.current + FULL_EVERY_MS - Date.now();
      if (wait > 0) return schedule(wait);
      changed.current.clear();
      lastFull.current = Date.now();
      ref.current.reload();
      return;
    }
    const ids = [...changed.current];
    changed.current.clear();
    const got = await Promise.all(ids.map((id) => api.job(id).then((r) => r.job, () => undefined)));
    const cur = ref.current.data;
    if (!cur) return;
    const byId = new Map(got.filter((j): j is Job => !!j).map((j) => [j.id, j]));
    const next = cur.jobs.map((j) => byId.get(j.id) ?? j).filter((j) => matching(j, states, pool));
    const known = new Set(cur.jobs.map((j) => j.id));
    for (const j of byId.values()) if (!known.has(j.id) && matching(j, states, pool)) next.push(j);
    ref.current.set({ ...cur, jobs: next });
  };

  useEvents((ev) => {
    const cur = ref.current.data;
    if (!ev.jobId || (!ev.job && !ev.task) || !cur) return;
    const i = cur.jobs.findIndex((j) => j.id === ev.jobId);
    if (ev.job && i >= 0) {
      const next = cur.jobs.slice();
      next[i] = { ...cur.jobs[i], status: { ...cur.jobs[i].status, ...ev.job } };
      if (!matching(next[i], states, pool)) next.splice(i, 1);
      ref.current.set({ ...cur, jobs: next });
    }
    changed.current.add(ev.jobId);
    schedule(GATHER_MS);
  });

  // Back after the stream was down: events may have been missed.
  useReloadAfterStreamDown(() => ref.current.reload());
  return list;
}
