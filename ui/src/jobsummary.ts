// What the overview shows of the jobs, read in answers whose size does not
// grow with the number of jobs: how many are unfinished and their tasks by
// state (counted by the server: ListJobs with count_total), the newest
// unfinished ones (for their updates and names) and the latest failed
// ones. Events keep it true: any job or task event has it read again,
// gathered and at most every SUMMARY_EVERY_MS, so a busy region costs three
// small reads every two seconds, whatever its size.
import { useEffect, useRef } from 'preact/hooks';
import { api, type Job } from './api';
import { useEvents, useReloadAfterStreamDown } from './events';
import { JOB_STATES, TERMINAL_JOB, useLoad, type Loaded } from './util';

/** How many of the newest unfinished jobs are read (their updates are shown). */
export const NEWEST_ACTIVE = 100;
/** How many of the newest failed jobs are read (the latest to fail are shown). */
const NEWEST_FAILED = 50;
/** How long events are gathered before the summary is read again. */
const GATHER_MS = 500;
/** The summary is read again at most this often. */
const SUMMARY_EVERY_MS = 2000;

const ACTIVE_STATES = JOB_STATES.filter((s) => !TERMINAL_JOB.has(s));

export interface JobSummary {
  /** Unfinished jobs, in every region. */
  active: number;
  /** Their tasks, by state name. */
  tasks: Record<string, number>;
  /** The newest unfinished jobs, newest first. */
  newest: Job[];
  /** The newest failed jobs, newest first. */
  failed: Job[];
}

export function useJobSummary(): Loaded<JobSummary> {
  const summary = useLoad(async (s): Promise<JobSummary> => {
    const [active, failed] = await Promise.all([
      api.jobCounts(ACTIVE_STATES, NEWEST_ACTIVE, s),
      api.jobCounts(['FAILED'], NEWEST_FAILED, s),
    ]);
    return { active: active.total, tasks: active.taskStates, newest: active.jobs, failed: failed.jobs };
  }, []);
  const ref = useRef(summary);
  ref.current = summary;
  const timer = useRef<number | undefined>(undefined);
  const last = useRef(0);
  useEffect(() => () => window.clearTimeout(timer.current), []);

  useEvents((ev) => {
    if (!ev.jobId || (!ev.job && !ev.task) || timer.current !== undefined) return;
    const wait = Math.max(GATHER_MS, last.current + SUMMARY_EVERY_MS - Date.now());
    timer.current = window.setTimeout(() => {
      timer.current = undefined;
      last.current = Date.now();
      ref.current.reload();
    }, wait);
  });
  // Back after the stream was down: events may have been missed.
  useReloadAfterStreamDown(() => ref.current.reload());
  return summary;
}
