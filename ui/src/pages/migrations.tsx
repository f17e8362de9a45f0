// Migrations: every migration of every region, newest first, with its
// progress and its report per job (what moved, what failed, how close the
// job came to its SLA), and the pause, resume, abort and roll back of
// `peloton migrate`.
import { useEffect, useState } from 'preact/hooks';
import { api, type Migration, type MigrationAction, type MigrationJob } from '../api';
import { Badge, Bar, Confirm, Empty, ErrorNote, JobRef, Title, useNow } from '../components';
import { setQuery, useLocation } from '../router';
import { useCan } from '../session';
import { ACTIVE_MIGRATION, fmtAgo, fmtDuration, fmtTime, jobType, migrationState, useInterval, useLoad } from '../util';

/** Rows of a migration's report shown before "Show all". */
const REPORT_ROWS = 50;

/** stopped: it could not progress and paused itself (as `peloton migrate` tells it). */
export function migrationStopped(m: Migration): boolean {
  return !!m.paused && (m.message ?? '').includes('stopped: ');
}

/**
 * What an operator may do to a migration in its state, as the region
 * allows it: pause, resume and abort while it moves instances (forward or
 * back); roll back unless it rolls back already, rolled back or failed.
 */
export function migrationActions(m: Migration): MigrationAction[] {
  const s = migrationState(m.state);
  const out: MigrationAction[] = [];
  if (ACTIVE_MIGRATION.has(s)) out.push(m.paused ? 'resume' : 'pause');
  if (s === 'MIGRATING' || s === 'SUCCEEDED' || s === 'ABORTED') out.push('rollback');
  if (ACTIVE_MIGRATION.has(s)) out.push('abort');
  return out;
}

/** Names of jobs by id, read once per id for the page's life. */
const names = new Map<string, Promise<string | undefined>>();

function useJobNames(ids: string[]): Map<string, string> {
  const [got, setGot] = useState(new Map<string, string>());
  const key = ids.join(',');
  useEffect(() => {
    let live = true;
    for (const id of ids) {
      if (got.has(id)) continue;
      let p = names.get(id);
      if (!p) {
        p = api.job(id).then(
          (r) => r.job.spec?.name ?? '',
          () => undefined, // unreadable (its region out of reach): named by its id alone
        );
        names.set(id, p);
      }
      void p.then((n) => live && n !== undefined && setGot((m) => (m.has(id) ? m : new Map(m).set(id, n))));
    }
    return () => {
      live = false;
    };
  }, [key]);
  return got;
}

const FILTERS: Record<string, (m: Migration) => boolean> = {
  '': () => true,
  active: (m) => ACTIVE_MIGRATION.has(migrationState(m.state)),
  ended: (m) => !ACTIVE_MIGRATION.has(migrationState(m.state)),
};

export function MigrationsPage() {
  const loc = useLocation();
  const now = useNow(2000);
  const show = loc.query.get('show') ?? '';
  const selected = loc.query.get('id') ?? '';
  const canManage = useCan('manage-host') === true;
  const migrations = useLoad((s) => api.migrations(s), []);
  useInterval(() => migrations.reload(), 2000);
  const all = [...(migrations.data?.migrations ?? [])].sort((a, b) => (b.createTime ?? '').localeCompare(a.createTime ?? ''));
  const list = all.filter(FILTERS[show] ?? FILTERS['']);
  const jobIds = [...new Set(list.flatMap((m) => [m.jobId ?? '', ...(m.jobs ?? []).slice(0, REPORT_ROWS).map((j) => j.jobId ?? '')]).filter(Boolean))];
  const jobNames = useJobNames(jobIds.slice(0, 500));

  return (
    <>
      <Title sub="Moves of jobs from one cluster to another, in every region, newest first.">Migrations</Title>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Show
          <select name="show" value={show} onChange={(e) => setQuery({ show: (e.target as HTMLSelectElement).value })}>
            <option value="">all</option>
            <option value="active">in progress</option>
            <option value="ended">ended</option>
          </select>
        </label>
      </form>
      <ErrorNote error={migrations.error} />
      {!migrations.loading && !migrations.error && list.length === 0 && (
        <Empty>
          No migration{show ? ' here' : ' yet'}. <code>peloton migrate start --job JOB_ID --to CLUSTER</code> starts one.
        </Empty>
      )}
      {list.map((m) => (
        <MigrationCard
          key={`${m.region}/${m.id}`}
          m={m}
          now={now}
          names={jobNames}
          open={m.id === selected || ACTIVE_MIGRATION.has(migrationState(m.state))}
          canManage={canManage}
          onChange={migrations.reload}
        />
      ))}
    </>
  );
}

const ACTION_TEXT: Record<MigrationAction, { label: string; body: (m: Migration) => string; danger?: boolean }> = {
  pause: { label: 'Pause', body: () => 'Instances in flight finish; no new batch starts.' },
  resume: {
    label: 'Resume',
    body: (m) => (migrationStopped(m) ? 'It goes on where it stopped; what stopped it may stop it again.' : 'It goes on moving instances.'),
  },
  abort: {
    label: 'Abort',
    body: (m) => `It stops where it is: moved instances stay on ${m.toCluster}, the others where they run; the jobs' cluster policies become what they were.`,
    danger: true,
  },
  rollback: {
    label: 'Roll back',
    body: () =>
      'Instances it moved go back to the clusters they came from, the same way (batch size, surge, SLA); the jobs\u2019 cluster policies become what they were.',
    danger: true,
  },
};

function MigrationCard({
  m,
  now,
  names,
  open,
  canManage,
  onChange,
}: {
  m: Migration;
  now: number;
  names: Map<string, string>;
  open: boolean;
  canManage: boolean;
  onChange: () => void;
}) {
  const s = migrationState(m.state);
  const back = s === 'ROLLING_BACK' || s === 'ROLLED_BACK';
  const total = m.instancesTotal ?? 0;
  const moved = back ? total - Math.min(total, m.instancesMoved ?? 0) : (m.instancesMoved ?? 0);
  const seconds = m.duration ? parseFloat(m.duration) : NaN;
  const what = m.jobId ? <JobRef id={m.jobId} name={names.get(m.jobId)} /> : <>every job of pool {m.pool}</>;
  return (
    <article class="card migration" id={`migration-${m.id}`} data-migration={m.id} data-state={s} aria-label={`Migration ${m.id}`}>
      <header class="card-head">
        <h2>
          {what} → {m.toCluster}
        </h2>
        <div>
          <Badge state={s} />{' '}
          {ACTIVE_MIGRATION.has(s) && (migrationStopped(m) ? <Badge state="FAILED" label="STOPPED" /> : m.paused && <Badge state="PAUSED" />)}
        </div>
      </header>
      <Bar plain label={back ? 'back' : 'moved'} used={moved} total={total} text={`${moved} / ${total}${m.instancesInFlight ? `, ${m.instancesInFlight} in flight` : ''}`} />
      <dl class="facts">
        <div class="fact">
          <dt>Region</dt>
          <dd>{m.region}</dd>
        </div>
        <div class="fact">
          <dt>Batch</dt>
          <dd>
            {m.batchSize || 'SLA'}
            {m.surge ? ', surge' : ''}
            {m.moveRunning ? ', moves running tasks' : ''}
          </dd>
        </div>
        <div class="fact">
          <dt>Started</dt>
          <dd title={fmtTime(m.createTime)}>{fmtAgo(m.createTime, now)}</dd>
        </div>
        {m.completionTime && (
          <div class="fact">
            <dt>Ended</dt>
            <dd title={fmtTime(m.completionTime)}>{fmtAgo(m.completionTime, now)}</dd>
          </div>
        )}
        {Number.isFinite(seconds) && (
          <div class="fact">
            <dt>Took</dt>
            <dd>{fmtDuration(seconds)}</dd>
          </div>
        )}
        <div class="fact">
          <dt>ID</dt>
          <dd>
            <code>{m.id}</code>
          </dd>
        </div>
      </dl>
      {m.message && (
        <p class="note" data-testid="migration-message">
          {m.message}
        </p>
      )}
      {canManage && (
        <div class="actions">
          {migrationActions(m).map((a) => (
            <Confirm
              key={a}
              label={ACTION_TEXT[a].label}
              title={`${ACTION_TEXT[a].label} the migration of ${m.jobId ? names.get(m.jobId) || m.jobId : 'pool ' + m.pool} to ${m.toCluster}?`}
              body={<p>{ACTION_TEXT[a].body(m)}</p>}
              danger={ACTION_TEXT[a].danger}
              action={async () => {
                await api.migrationAction(m, a);
                onChange();
              }}
            />
          ))}
        </div>
      )}
      <details open={open}>
        <summary>Report: {m.jobs?.length ?? 0} jobs</summary>
        <Report jobs={m.jobs ?? []} names={names} />
      </details>
    </article>
  );
}

function Report({ jobs, names }: { jobs: MigrationJob[]; names: Map<string, string> }) {
  const [all, setAll] = useState(false);
  if (jobs.length === 0) return <Empty>No job was selected.</Empty>;
  const shown = all ? jobs : jobs.slice(0, REPORT_ROWS);
  return (
    <div class="table-wrap">
      <table class="report">
        <thead>
          <tr>
            <th scope="col">Job</th>
            <th scope="col">From</th>
            <th scope="col">Moved</th>
            <th scope="col" title="The most instances unavailable at once, and how many the job's SLA allows">
              Unavailable
            </th>
            <th scope="col">Failures</th>
            <th scope="col">Retries</th>
            <th scope="col">Done</th>
            <th scope="col">Message</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((j) => (
            <tr key={j.jobId} data-job={j.jobId}>
              <td>
                <JobRef id={j.jobId} name={names.get(j.jobId ?? '')} /> <span class="muted small">{jobType(j.type)}</span>
              </td>
              <td>{j.fromCluster}</td>
              <td class="num">
                {j.moved ?? 0} / {j.instances ?? 0}
                {j.inFlight ? <div class="muted small">{j.inFlight} in flight</div> : null}
              </td>
              <td class="num">{jobType(j.type) === 'batch' ? '–' : `${j.maxUnavailable ?? 0} / ${j.slaMaxUnavailable ?? 0}`}</td>
              <td class="num">{j.failures ?? 0}</td>
              <td class="num">{j.retries ?? 0}</td>
              <td>{j.done ? 'yes' : 'no'}</td>
              <td class="reason">{j.message}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {!all && jobs.length > shown.length && (
        <button type="button" onClick={() => setAll(true)}>
          Show all {jobs.length} jobs
        </button>
      )}
    </div>
  );
}
