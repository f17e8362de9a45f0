// Periodic jobs: a job with a schedule runs no tasks of its own; at each
// tick it launches a run, a job of its own linked back to it (status.runOf).
// Its page shows the schedule and its state, the runs (ListJobs run_of,
// newest first) and the actions Run now, Suspend and Resume; a run's page
// says whose run it is.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api, type Job, type RunOf } from '../api';
import { Badge, Confirm, Empty, ErrorNote, Fact, JobRef, Section, useNow } from '../components';
import { useEvents, useReloadAfterStreamDown, useThrottled } from '../events';
import { Link } from '../router';
import { useCan } from '../session';
import { TERMINAL_JOB, enumName, fmtAgo, fmtDuration, fmtNum, fmtTime, fmtUntil, jobState, num, useLoad } from '../util';

/** Runs read: the kept ones (at most 100 finished) and the ones going. */
const RUNS_SHOWN = 100;

export const isPeriodic = (j?: Job) => !!j?.spec?.schedule;

/** stopped says a periodic job launches no more runs: it was stopped, or ended. */
function stopped(j: Job): boolean {
  const st = jobState(j.status?.state);
  return TERMINAL_JOB.has(st) || st === 'KILLING';
}

/**
 * nextRun says when a periodic job runs next, as the job list shows it:
 * "next run in 42s", "suspended"; nothing once it was stopped.
 */
export function nextRun(j: Job, now: number): string {
  if (stopped(j)) return '';
  const p = j.status?.periodic;
  if (p?.suspended) return 'suspended';
  if (!p?.nextRunTime) return 'no next run';
  const rel = fmtUntil(p.nextRunTime, now);
  return rel === 'now' ? 'next run due now' : `next run ${rel}`;
}

/** What each concurrency policy does with a tick while a run goes. */
const POLICIES: Record<string, string> = {
  ALLOW: 'allow: runs may overlap',
  FORBID: 'forbid: a tick is skipped while a run goes',
  REPLACE: 'replace: a tick stops the runs going',
};

function policy(p?: string): string {
  const n = enumName(p, 'CONCURRENCY_POLICY_');
  return POLICIES[n] ?? POLICIES.ALLOW;
}

/**
 * PeriodicParts are the parts of a periodic job's page in place of its
 * tasks: the schedule with its actions, and the runs. onChange reads the
 * job again.
 */
export function PeriodicParts({ job, onChange }: { job: Job; onChange: () => void }) {
  const runs = useLoad((s) => api.runs(job.id, RUNS_SHOWN, s), [job.id]);
  const [launched, setLaunched] = useState<Job>();
  const reloadRuns = useThrottled(() => runs.reload(), 1000);
  // A run that finished may push the oldest kept one out: it is deleted
  // by the next look at the job (within about a second).
  const reloadAfterEnd = useThrottled(() => runs.reload(), 2000);

  useEvents((ev) => {
    if (!ev.jobId || !ev.job) return;
    // The job's own events: a tick handled, a run launched by hand, a
    // suspend or a resume.
    if (ev.jobId === job.id) return reloadRuns();
    const rows = runs.data?.jobs ?? [];
    const i = rows.findIndex((r) => r.id === ev.jobId);
    if (i < 0) return;
    const next = rows.slice();
    next[i] = { ...rows[i], status: { ...rows[i].status, ...ev.job } };
    runs.set({ ...runs.data, jobs: next });
    if (TERMINAL_JOB.has(jobState(ev.job.state))) reloadAfterEnd();
  });
  useReloadAfterStreamDown(() => runs.reload());

  const changed = () => {
    onChange();
    runs.reload();
  };
  const list = runs.data?.jobs ?? [];
  return (
    <>
      <ScheduleSection
        job={job}
        runs={list}
        launched={launched}
        onRun={(run) => {
          setLaunched(run);
          changed();
        }}
        onChange={changed}
      />
      <Section title="Tasks" id="tasks">
        <Empty>
          <span data-testid="no-tasks">Runs no tasks of its own: see its runs below.</span>
        </Empty>
      </Section>
      <Section title="Runs" id="runs">
        <ErrorNote error={runs.error} />
        <RunTable runs={list} keep={job.spec?.schedule?.keepRuns || 3} more={!!runs.data?.nextPageToken} loading={runs.loading} />
      </Section>
    </>
  );
}

function ScheduleSection({
  job,
  runs,
  launched,
  onRun,
  onChange,
}: {
  job: Job;
  runs: Job[];
  launched?: Job;
  onRun: (run: Job) => void;
  onChange: () => void;
}) {
  const now = useNow(1000);
  const canRun = useCan('create-job', { jobId: job.id });
  const canSuspend = useCan('update-job', { jobId: job.id });
  const sc = job.spec?.schedule ?? {};
  const p = job.status?.periodic ?? {};
  const ended = stopped(job);
  const name = job.spec?.name || job.id;
  const deadline = sc.startingDeadlineSeconds ?? 0;
  const last = p.lastRunId ? runs.find((r) => r.id === p.lastRunId) : undefined;
  let next: ComponentChildren;
  if (ended) next = 'none: the job was stopped';
  else if (p.suspended) next = 'none while suspended';
  else if (!p.nextRunTime) next = 'none: the schedule has no more ticks';
  else {
    const rel = fmtUntil(p.nextRunTime, now);
    next = (
      <>
        <time dateTime={p.nextRunTime}>{fmtTime(p.nextRunTime)}</time> ({rel === 'now' ? 'due now' : rel})
      </>
    );
  }
  const actions = !ended && (
    <>
      {canRun && (
        <Confirm
          label="Run now"
          title={`Run ${name} now?`}
          body={<p>A run starts now, whatever the schedule, a suspension and the concurrency policy: a job of its own, made from this job's spec.</p>}
          action={async () => onRun((await api.runJob(job.id)).run)}
        />
      )}
      {canSuspend &&
        (p.suspended ? (
          <Confirm
            key="resume"
            label="Resume"
            title={`Resume ${name}?`}
            body={<p>Ticks launch runs again from the next one; the ticks passed while it was suspended are not launched.</p>}
            action={async () => {
              await api.resumeJob(job.id);
              onChange();
            }}
          />
        ) : (
          <Confirm
            key="suspend"
            label="Suspend"
            title={`Suspend ${name}?`}
            body={<p>No tick launches a run until it is resumed; runs going go on, and a run can still be started by hand.</p>}
            action={async () => {
              await api.suspendJob(job.id);
              onChange();
            }}
          />
        ))}
    </>
  );
  return (
    <Section title="Schedule" id="schedule" actions={actions}>
      <dl class="facts" data-testid="schedule">
        <Fact k="Cron" v={<code data-testid="cron">{sc.cron}</code>} />
        <Fact k="Time zone" v={sc.timeZone || 'UTC'} />
        <Fact k="Concurrency" v={policy(sc.concurrencyPolicy)} />
        <Fact
          k="Starting deadline"
          v={deadline > 0 ? <span title={`${deadline} seconds`}>{fmtDuration(deadline)}</span> : 'none: the latest missed tick runs, however late'}
        />
        <Fact k="Runs kept" v={`${fmtNum(sc.keepRuns || 3)} finished`} />
        <Fact k="Next run" v={<span data-testid="next-run">{next}</span>} />
        <Fact
          k="Suspended"
          v={<span data-testid="suspended">{p.suspended ? <Badge state="SUSPENDED" label="suspended" /> : 'no'}</span>}
        />
        <Fact
          k="Ticks"
          v={
            <span data-testid="ticks">
              {fmtNum(num(p.launched))} launched, {fmtNum(num(p.skipped))} skipped, {fmtNum(num(p.missed))} missed
            </span>
          }
        />
        <Fact k="Runs going" v={<span data-testid="runs-going">{fmtNum(p.activeRuns ?? 0)}</span>} />
        <Fact k="Last run" v={p.lastRunId ? <JobRef id={p.lastRunId} name={last?.spec?.name} /> : 'none yet'} />
      </dl>
      {launched && (
        <p class="note" data-testid="run-launched">
          Started by hand: <JobRef id={launched.id} name={launched.spec?.name} />.
        </p>
      )}
    </Section>
  );
}

function RunTable({ runs, keep, more, loading }: { runs: Job[]; keep: number; more: boolean; loading: boolean }) {
  const now = useNow(5000);
  if (runs.length === 0) return loading ? null : <Empty>No run yet.</Empty>;
  return (
    <>
      <p class="muted small">
        Newest first: the runs going and the {fmtNum(keep)} finished ones kept{more && `; the newest ${RUNS_SHOWN} shown`}.
      </p>
      <div class="table-wrap">
        <table class="runs">
          <thead>
            <tr>
              <th scope="col">Run</th>
              <th scope="col">Tick</th>
              <th scope="col">State</th>
              <th scope="col">Started</th>
              <th scope="col">Completed</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((r) => {
              const st = jobState(r.status?.state);
              const tick = r.status?.runOf?.tickTime;
              return (
                <tr key={r.id} data-run={r.id} data-state={st}>
                  <td>
                    <Link to={`/jobs/${encodeURIComponent(r.id)}`}>
                      <code class="small">{r.id}</code>
                    </Link>
                  </td>
                  <td>{tick ? <time dateTime={tick}>{fmtTime(tick)}</time> : <span class="muted">by hand</span>}</td>
                  <td>
                    <Badge state={st} />
                    {r.status?.message && <div class="muted small">{r.status.message}</div>}
                  </td>
                  <td title={r.status?.startTime}>{fmtAgo(r.status?.startTime, now)}</td>
                  <td title={r.status?.completionTime}>{fmtAgo(r.status?.completionTime, now)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </>
  );
}

/** RunOfNote says, on a run's page, which periodic job launched it and for which tick. */
export function RunOfNote({ runOf }: { runOf: RunOf }) {
  const parent = useLoad((s) => api.job(runOf.jobId ?? '', s).then((r) => r.job), [runOf.jobId]);
  return (
    <section class="card note-card" aria-label="Run of" data-testid="run-of">
      <p>
        Run of <JobRef id={runOf.jobId} name={parent.data?.spec?.name} />,{' '}
        {runOf.tickTime ? (
          <>
            tick <time dateTime={runOf.tickTime}>{fmtTime(runOf.tickTime)}</time>
          </>
        ) : (
          'by hand'
        )}
        .
      </p>
    </section>
  );
}
