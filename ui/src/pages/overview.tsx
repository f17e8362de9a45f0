// Overview: regions, clusters, tasks running and pending, recent failures,
// updates, migrations and drills in progress.
import { useEffect, useState } from 'preact/hooks';
import { api, type Host, type PelotonEvent, type Update } from '../api';
import { Badge, Bar, Empty, ErrorNote, JobRef, Section, StateCounts, Title, useNow } from '../components';
import { subscribe, useEvents, useThrottled } from '../events';
import { NEWEST_ACTIVE, useJobSummary } from '../jobsummary';
import { Link } from '../router';
import {
  ACTIVE_MIGRATION,
  ACTIVE_UPDATE,
  TASK_STATES,
  WAITING_TASK,
  fmtAgo,
  fmtMem,
  fmtNum,
  hostState,
  migrationState,
  taskState,
  updateState,
  useInterval,
  useLoad,
} from '../util';

/** Task failures seen on the stream since the UI was opened, newest first. */
const failures: PelotonEvent[] = [];
subscribe((ev) => {
  const s = taskState(ev.task?.state);
  if (s === 'FAILED' || s === 'LOST') {
    failures.unshift(ev);
    failures.length = Math.min(failures.length, 20);
  }
});

interface Cluster {
  key: string;
  region: string;
  cluster: string;
  kind: string;
  hosts: Host[];
}

function clustersOf(hosts: Host[]): Cluster[] {
  const m = new Map<string, Cluster>();
  for (const h of hosts) {
    const key = `${h.region ?? ''}/${h.cluster ?? ''}`;
    let c = m.get(key);
    if (!c) m.set(key, (c = { key, region: h.region ?? '', cluster: h.cluster ?? '', kind: h.kind ?? '', hosts: [] }));
    c.hosts.push(h);
  }
  return [...m.values()].sort((a, b) => a.key.localeCompare(b.key));
}

export function Overview() {
  const now = useNow();
  const regions = useLoad((s) => api.regions(s), []);
  const hosts = useLoad((s) => api.hosts(s), []);
  // Only what the page shows, counted by the server: how many jobs are
  // unfinished and their tasks by state, the newest unfinished jobs and
  // the newest failed ones; never the whole list (jobsummary.ts).
  const jobs = useJobSummary();
  const drills = useLoad((s) => api.drills(s), []);
  const migrations = useLoad((s) => api.migrations(s), []);
  const [updates, setUpdates] = useState<Update[]>([]);
  const [, setFailTick] = useState(0);

  const updateIds = (jobs.data?.newest ?? []).map((j) => j.status?.updateId).filter((x): x is string => !!x);
  const loadUpdates = async () => {
    const got = await Promise.all(updateIds.slice(0, 50).map((id) => api.update(id).then((r) => r.update, () => undefined)));
    setUpdates(got.filter((u): u is Update => !!u && ACTIVE_UPDATE.has(updateState(u.state))));
  };
  // The updates of the jobs read, as soon as they are known.
  useEffect(() => void loadUpdates(), [updateIds.join()]);
  // The summary follows the stream itself (jobsummary.ts); updates and the
  // failures seen on the stream are read again here.
  const refresh = useThrottled(() => {
    void loadUpdates();
    setFailTick((t) => t + 1);
  }, 1000);
  useEvents((ev) => {
    if (ev.job) refresh();
    else if (ev.task && (taskState(ev.task.state) === 'FAILED' || taskState(ev.task.state) === 'LOST')) refresh();
  });
  useInterval(() => {
    regions.reload();
    hosts.reload();
    drills.reload();
    migrations.reload();
    void loadUpdates();
  }, 3000);

  const names = new Map([...(jobs.data?.newest ?? []), ...(jobs.data?.failed ?? [])].map((j) => [j.id, j.spec?.name ?? ''] as const));
  const counts = jobs.data?.tasks ?? {};
  const activeJobs = jobs.data?.active ?? 0;
  const running = counts.RUNNING ?? 0;
  const pending = WAITING_TASK.reduce((a, s) => a + (counts[s] ?? 0), 0);
  const failedJobs = (jobs.data?.failed ?? [])
    .slice()
    .sort((a, b) => (b.status?.completionTime ?? '').localeCompare(a.status?.completionTime ?? ''))
    .slice(0, 10);
  const activeMigrations = (migrations.data?.migrations ?? []).filter((m) => ACTIVE_MIGRATION.has(migrationState(m.state)));
  const activeDrills = (drills.data?.drills ?? []).filter((d) => d.state === 'running' || d.state === 'healed');

  return (
    <>
      <Title sub="What runs where, what waits, and what is going on.">Overview</Title>
      <div class="figures" role="list" aria-label="Task figures">
        <Figure label="Running tasks" value={running} testid="running-tasks" />
        <Figure label="Pending tasks" value={pending} testid="pending-tasks" />
        <Figure label="Active jobs" value={activeJobs} testid="active-jobs" />
        <Figure label="Hosts" value={hosts.data?.hosts?.length ?? 0} />
      </div>
      <div class="grid">
        <Section title="Regions">
          <ErrorNote error={regions.error} />
          <ul class="tiles">
            {(regions.data?.regions ?? []).map((r) => {
              const leader = r.members?.find((m) => m.leader);
              return (
                <li key={r.name} class="tile" data-region={r.name}>
                  <div class="tile-head">
                    <strong>{r.name}</strong> <Badge state={(r.health ?? '').toUpperCase()} label={r.health} />
                  </div>
                  <div class="muted small">
                    leader {leader?.name ?? 'none'}
                    {r.lastSeen && ` · seen ${fmtAgo(r.lastSeen, now)}`}
                  </div>
                  {r.capacity ? (
                    <>
                      <Bar label="cpu" used={r.allocation?.cpu ?? 0} total={r.capacity?.cpu ?? 0} />
                      <Bar
                        label="mem"
                        used={r.allocation?.memMb ?? 0}
                        total={r.capacity?.memMb ?? 0}
                        text={`${fmtMem(r.allocation?.memMb)} / ${fmtMem(r.capacity?.memMb)}`}
                      />
                      {(r.capacity?.gpu ?? 0) > 0 && <Bar label="gpu" used={r.allocation?.gpu ?? 0} total={r.capacity?.gpu ?? 0} />}
                    </>
                  ) : (
                    <p class="muted small" data-testid="no-figures">
                      no figures: out of reach of this region
                    </p>
                  )}
                </li>
              );
            })}
          </ul>
        </Section>
        <Section title="Clusters">
          <ErrorNote error={hosts.error} />
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Region</th>
                  <th scope="col">Cluster</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Hosts</th>
                  <th scope="col">CPU allocated</th>
                </tr>
              </thead>
              <tbody>
                {clustersOf(hosts.data?.hosts ?? []).map((c) => {
                  const up = c.hosts.filter((h) => hostState(h.state) === 'UP').length;
                  const cap = c.hosts.reduce((a, h) => a + (h.capacity?.cpu ?? 0), 0);
                  const used = c.hosts.reduce((a, h) => a + (h.allocated?.cpu ?? 0), 0);
                  return (
                    <tr key={c.key}>
                      <td>{c.region}</td>
                      <td>
                        <Link to={`/hosts?region=${encodeURIComponent(c.region)}&cluster=${encodeURIComponent(c.cluster)}`}>{c.cluster}</Link>
                      </td>
                      <td>{c.kind}</td>
                      <td>
                        {up} up of {c.hosts.length}
                      </td>
                      <td class="wide">
                        <Bar label="cpu" used={used} total={cap} />
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        </Section>
        <Section title="Tasks of active jobs">
          <ErrorNote error={jobs.error} />
          <StateCounts counts={counts} order={TASK_STATES} label="Tasks by state" />
        </Section>
        <Section title="In progress">
          <h3>Updates</h3>
          {activeJobs > NEWEST_ACTIVE && (
            <p class="muted small" data-testid="updates-of-newest">
              Of the {NEWEST_ACTIVE} newest of {fmtNum(activeJobs)} active jobs.
            </p>
          )}
          {updates.length === 0 ? (
            <Empty>No update is rolling.</Empty>
          ) : (
            <ul class="plain">
              {updates.map((u) => (
                <li key={u.id} data-update={u.id}>
                  <JobRef id={u.jobId} name={names.get(u.jobId ?? '')} /> v{u.fromVersion}→v{u.toVersion}{' '}
                  <Badge state={updateState(u.state)} /> {u.paused && <Badge state="PAUSED" />}{' '}
                  <Bar plain label="done" used={u.instancesDone ?? 0} total={u.instancesTotal ?? 0} />
                </li>
              ))}
            </ul>
          )}
          <h3>Drills</h3>
          {activeDrills.length === 0 ? (
            <Empty>No drill is running.</Empty>
          ) : (
            <ul class="plain">
              {activeDrills.map((d) => (
                <li key={d.id}>
                  <Link to="/regions">{d.region}</Link> <Badge state={(d.state ?? '').toUpperCase()} label={d.state} /> started{' '}
                  {fmtAgo(d.startTime, now)}
                </li>
              ))}
            </ul>
          )}
          <h3>
            Migrations <Link to="/migrations" class="small">all migrations</Link>
          </h3>
          <ErrorNote error={migrations.error} />
          {activeMigrations.length === 0 ? (
            <Empty>No migration is moving instances.</Empty>
          ) : (
            <ul class="plain">
              {activeMigrations.map((m) => (
                <li key={m.id} data-migration={m.id}>
                  {m.jobId ? <JobRef id={m.jobId} name={names.get(m.jobId)} /> : <>pool {m.pool}</>}{' '}
                  → {m.toCluster} <span class="muted">({m.region})</span> <Badge state={migrationState(m.state)} />{' '}
                  {m.paused && <Badge state="PAUSED" />} <Link to={`/migrations?id=${encodeURIComponent(m.id)}`}>report</Link>{' '}
                  <Bar plain label="moved" used={m.instancesMoved ?? 0} total={m.instancesTotal ?? 0} />
                </li>
              ))}
            </ul>
          )}
        </Section>
        <Section title="Recent failures">
          {failedJobs.length === 0 && failures.length === 0 && <Empty>Nothing failed.</Empty>}
          <ul class="plain">
            {failures.map((ev) => (
              <li key={ev.seq}>
                <Link to={`/jobs/${encodeURIComponent(ev.jobId ?? '')}/tasks/${ev.task?.instance ?? 0}`}>task {ev.task?.instance ?? 0}</Link> of{' '}
                <JobRef id={ev.jobId} name={names.get(ev.jobId ?? '')} />{' '}
                <Badge state={taskState(ev.task?.state)} /> {ev.task?.reason} <span class="muted">{fmtAgo(ev.time, now)}</span>
              </li>
            ))}
            {failedJobs.map((j) => (
              <li key={j.id}>
                job <JobRef id={j.id} name={j.spec?.name} /> <Badge state="FAILED" />{' '}
                {j.status?.message} <span class="muted">{fmtAgo(j.status?.completionTime, now)}</span>
              </li>
            ))}
          </ul>
        </Section>
      </div>
    </>
  );
}

function Figure({ label, value, testid }: { label: string; value: number; testid?: string }) {
  return (
    <div class="figure" role="listitem">
      <span class="figure-value" data-testid={testid}>
        {fmtNum(value)}
      </span>
      <span class="figure-label">{label}</span>
    </div>
  );
}
