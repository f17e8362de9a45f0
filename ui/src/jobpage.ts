// One page of the job list, as the jobs page shows it: the server filters,
// orders, counts and pages (ListJobs); the tab holds the page it shows and
// nothing more. Events keep it true: a job event sets the state of a job on
// the page at once, and any job or task event has the page read again (it
// may add, drop or move a job), gathered and at most every PAGE_EVERY_MS:
// a busy region costs one page every two seconds, whatever its size.
import { useEffect, useRef } from 'preact/hooks';
import { api, type Job, type JobPageQuery } from './api';
import { useEvents, useReloadAfterStreamDown } from './events';
import { useLoad, type Loaded } from './util';

/** How long events are gathered before the page is read again. */
const GATHER_MS = 500;
/** The page is read again at most this often. */
const PAGE_EVERY_MS = 2000;

/** A page; `current` says it answers the query asked now (not the one before). */
export type JobPage = Loaded<{ jobs: Job[]; next: string | undefined; total: number; query: string }> & { current: boolean };

export function useJobPage(q: JobPageQuery): JobPage {
  const k = JSON.stringify(q);
  const page = useLoad(async (s) => ({ ...(await api.jobPage(q, s)), query: k }), [k]);
  const ref = useRef(page);
  ref.current = page;
  const timer = useRef<number | undefined>(undefined);
  const last = useRef(0);
  useEffect(() => () => window.clearTimeout(timer.current), []);

  const schedule = () => {
    if (timer.current !== undefined) return;
    const wait = Math.max(GATHER_MS, last.current + PAGE_EVERY_MS - Date.now());
    timer.current = window.setTimeout(() => {
      timer.current = undefined;
      last.current = Date.now();
      ref.current.reload();
    }, wait);
  };

  useEvents((ev) => {
    const cur = ref.current.data;
    if (!ev.jobId || (!ev.job && !ev.task) || !cur) return;
    const i = cur.jobs.findIndex((j) => j.id === ev.jobId);
    if (ev.job && i >= 0) {
      const jobs = cur.jobs.slice();
      jobs[i] = { ...cur.jobs[i], status: { ...cur.jobs[i].status, ...ev.job } };
      ref.current.set({ ...cur, jobs });
    }
    // Any job's event may add a job to the page, drop one or change its
    // counts: the page is read again, gathered and at most so often.
    schedule();
  });

  // Back after the stream was down: events may have been missed.
  useReloadAfterStreamDown(() => ref.current.reload());
  return { ...page, current: page.data?.query === k };
}
