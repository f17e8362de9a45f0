// Regions and drills: each region's health (and its last ten minutes, as
// the server keeps them), members and capacity, the failover readiness
// plan, and drill reports with their timings as a timeline.
import { useRef, useState } from 'preact/hooks';
import { api, type Drill, type PlannedMove, type RegionHistory, type RegionMember } from '../api';
import { Badge, Bar, Confirm, Empty, ErrorNote, Section, Title, useNow } from '../components';
import { fmtAgo, fmtDuration, fmtMem, fmtTime, useInterval, useLoad } from '../util';
import { useCan } from '../session';

const HISTORY_MS = 10 * 60 * 1000;

/** A region's history as [unix ms, health] per sample: the health most of
 * the step's samples found. */
function healthSamples(h: RegionHistory | undefined): [number, string][] {
  return (h?.times ?? []).map((t, i) => {
    const shares: [string, number][] = [
      ['alive', h?.alive?.[i] ?? 0],
      ['suspect', h?.suspect?.[i] ?? 0],
      ['failed', h?.failed?.[i] ?? 0],
    ];
    shares.sort((a, b) => b[1] - a[1]);
    return [t * 1000, shares[0][1] > 0 ? shares[0][0] : 'unknown'];
  });
}

export function RegionsPage() {
  const canManage = useCan('manage-region') === true;
  const now = useNow(1000);
  const regions = useLoad((s) => api.regions(s), []);
  const health = useLoad((s) => api.regionHistory(new Date(Date.now() - HISTORY_MS), s), []);
  useInterval(() => health.reload(), 2000);
  const healthOf = new Map((health.data?.regions ?? []).map((h) => [h.name, healthSamples(h)]));
  const drills = useLoad((s) => api.drills(s), []);
  const plan = useLoad((s) => api.plan(s), []);
  useInterval(() => {
    regions.reload();
    drills.reload();
  }, 1000);
  useInterval(() => plan.reload(), 10000);
  // Fail back applies to a region whose jobs a failover moved away and
  // that still run elsewhere: their copies carry peloton.relocated-from.
  const relocated = useLoad((s) => api.relocated(s), []);
  useInterval(() => relocated.reload(), 5000);
  const away = new Map<string, number>();
  for (const j of relocated.data?.jobs ?? []) {
    const from = (j.spec?.labels?.['peloton.relocated-from'] ?? '').split('@')[1];
    if (from) away.set(from, (away.get(from) ?? 0) + 1);
  }
  const [failedBack, setFailedBack] = useState<{ region: string; moved: PlannedMove[]; notMoved: PlannedMove[] }>();
  const names = (regions.data?.regions ?? []).map((r) => r.name);
  const healthOfRegion = new Map((regions.data?.regions ?? []).map((r) => [r.name, r.health ?? '']));
  /** The health of a region that is not alive, '' for one that is (or is not known yet). */
  const down = (name?: string) => {
    const h = healthOfRegion.get(name ?? '');
    return h && h !== 'alive' ? h : '';
  };
  const list = [...(drills.data?.drills ?? [])].sort((a, b) => (b.startTime ?? '').localeCompare(a.startTime ?? ''));

  return (
    <>
      <Title sub="Health as the federation sees it; drills fence a region and time what follows.">Regions and drills</Title>
      <Section title="Regions" id="regions">
        <ErrorNote error={regions.error} />
        <div class="table-wrap">
          <table class="regions">
            <thead>
              <tr>
                <th scope="col">Region</th>
                <th scope="col">Health</th>
                <th scope="col">Members</th>
                <th scope="col">Allocated</th>
                <th scope="col">Last seen</th>
                <th scope="col">Health, last 10 minutes</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {(regions.data?.regions ?? []).map((r) => (
                <tr key={r.name} data-region={r.name}>
                  <th scope="row">{r.name}</th>
                  <td>
                    <Badge state={(r.health ?? '').toUpperCase()} label={r.health} />
                  </td>
                  <td>
                    <ul class="plain small">
                      {(r.members ?? []).map((m) => (
                        <li key={m.name}>
                          {m.name} {m.leader && <strong>leader</strong>} <span class="muted">{[m.role, m.status, m.address].filter(Boolean).join(' · ')}</span>
                          {m.probes && <Probes probes={m.probes} />}
                        </li>
                      ))}
                    </ul>
                  </td>
                  <td class="wide">
                    <Bar label="cpu" used={r.allocation?.cpu ?? 0} total={r.capacity?.cpu ?? 0} />
                    <Bar label="mem" used={r.allocation?.memMb ?? 0} total={r.capacity?.memMb ?? 0} text={`${fmtMem(r.allocation?.memMb)} / ${fmtMem(r.capacity?.memMb)}`} />
                  </td>
                  <td>{r.lastSeen ? fmtAgo(r.lastSeen, now) : <span class="muted" title="this server does not report it">–</span>}</td>
                  <td class="wide">
                    <HealthStrip samples={healthOf.get(r.name) ?? []} now={now} />
                  </td>
                  <td class="actions" data-away={away.get(r.name) ?? 0}>
                    {(away.get(r.name) ?? 0) > 0 && (
                      <span class="muted small">
                        {away.get(r.name)} of its jobs run elsewhere{r.health !== 'alive' && '; fail back once it is alive'}
                      </span>
                    )}
                    {canManage && r.health === 'alive' && (away.get(r.name) ?? 0) > 0 && (
                      <Confirm
                        label="Fail back"
                        title={`Fail back to ${r.name}?`}
                        body={`${away.get(r.name)} jobs relocated away from the region are re-created there with the instances not yet succeeded, and their relocated copies are stopped.`}
                        action={async () => {
                          const res = await api.failBack(r.name);
                          setFailedBack({ region: r.name, moved: res.moved ?? [], notMoved: res.notMoved ?? [] });
                          relocated.reload();
                        }}
                      />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Section>
      {failedBack && (
        <section class="card" aria-label="Fail back" data-testid="failback-result">
          <p>
            Fail back to <strong>{failedBack.region}</strong>: {failedBack.moved.length} jobs moved
            {failedBack.notMoved.length > 0 && `, ${failedBack.notMoved.length} not`}.
          </p>
          <ul class="small">
            {[...failedBack.moved, ...failedBack.notMoved].map((m) => (
              <li key={m.jobId}>
                {m.jobName || m.jobId}: {m.reason}
              </li>
            ))}
          </ul>
        </section>
      )}
      <Section title="Drills" id="drills" actions={canManage && <StartDrill regions={names} onStarted={drills.reload} />}>
        <ErrorNote error={drills.error} />
        {list.length === 0 ? <Empty>No drill yet.</Empty> : list.map((d) => <DrillReport key={d.id} d={d} now={now} />)}
      </Section>
      <Section title="Failover readiness" id="plan">
        <ErrorNote error={plan.error} />
        {(plan.data?.plans ?? []).length === 0 && <Empty>No plan.</Empty>}
        <ul class="plain">
          {(plan.data?.plans ?? []).map((p) => (
            <li key={p.region} data-plan={p.region}>
              <strong>{p.region}</strong>:{' '}
              {down(p.region) ? (
                <>
                  <Badge state={down(p.region).toUpperCase()} label={down(p.region)} /> not ready while {down(p.region)}: a failed
                  region's jobs are moved, not planned (see its drill and the relocated jobs). As last planned,{' '}
                </>
              ) : (p.unplaced?.length ?? 0) === 0 ? (
                <Badge state="SUCCEEDED" label="ready" />
              ) : (
                <Badge state="FAILED" label={`${p.unplaced?.length} would not fit`} />
              )}{' '}
              {p.moves?.length ?? 0} relocatable jobs would move, {p.pinned ?? 0} stay pinned
              {(p.moves?.length ?? 0) + (p.unplaced?.length ?? 0) > 0 && (
                <ul class="small">
                  {(p.moves ?? []).map((m) => (
                    <li key={m.jobId}>
                      {m.jobName || m.jobId} → {m.toRegion}
                    </li>
                  ))}
                  {(p.unplaced ?? []).map((m) => (
                    <li key={m.jobId} class="bad">
                      {m.jobName || m.jobId}: {m.reason}
                    </li>
                  ))}
                </ul>
              )}
            </li>
          ))}
        </ul>
      </Section>
    </>
  );
}

function HealthStrip({ samples, now }: { samples: [number, string][]; now: number }) {
  const from = now - HISTORY_MS;
  const changes = samples.filter((s, i) => i === 0 || s[1] !== samples[i - 1][1]);
  return (
    <div class="strip" role="img" aria-label={changes.map(([t, h]) => `${h} since ${fmtTime(new Date(t).toISOString())}`).join('; ') || 'no samples yet'}>
      {changes.map(([t, h], i) => {
        const end = i + 1 < changes.length ? changes[i + 1][0] : now;
        const left = Math.max(0, ((t - from) / HISTORY_MS) * 100);
        const width = Math.max(0.5, ((end - Math.max(t, from)) / HISTORY_MS) * 100);
        return <span key={t} class={`strip-part h-${h}`} style={{ left: `${left}%`, width: `${width}%` }} title={h} />;
      })}
    </div>
  );
}

function StartDrill({ regions, onStarted }: { regions: string[]; onStarted: () => void }) {
  const region = useRef<HTMLSelectElement>(null);
  const duration = useRef<HTMLInputElement>(null);
  const [started, setStarted] = useState<string>();
  return (
    <>
      <Confirm
        label="Start a drill…"
        title="Start a region failure drill"
        body="The region is fenced and cut off from gossip; the others declare it failed and relocate its work; then it is healed and its work fails back."
        danger
        action={async () => {
          const r = await api.startDrill(region.current?.value ?? '', Number(duration.current?.value || 30));
          setStarted(r.drill.id);
          onStarted();
        }}
      >
        <label class="block">
          Region
          <select ref={region} name="region">
            {regions.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <label class="block">
          Fenced for (seconds)
          <input ref={duration} type="number" name="duration" min={1} max={3600} value={30} />
        </label>
      </Confirm>
      {started && <span class="sr-only" role="status">Drill {started} started</span>}
    </>
  );
}

function DrillReport({ d, now }: { d: Drill; now: number }) {
  const start = d.startTime ? new Date(d.startTime).getTime() : now;
  const end = d.endTime ? new Date(d.endTime).getTime() : undefined;
  const elapsed = ((end ?? now) - start) / 1000;
  const healed = end && d.failbackSeconds ? elapsed - d.failbackSeconds : undefined;
  const span = Math.max(elapsed, d.relocationSeconds ?? 0, d.detectionSeconds ?? 0, 1);
  const pct = (s: number) => `${Math.min(100, (s / span) * 100)}%`;
  const marks: [string, number | undefined][] = [
    ['detected', d.detectionSeconds || undefined],
    ['relocated', d.relocationSeconds || undefined],
    ['healed', healed],
    ['failed back', end ? elapsed : undefined],
  ];
  return (
    <article class="drill" data-drill={d.id} data-state={d.state} aria-label={`Drill of ${d.region}`}>
      <header>
        <strong>{d.region}</strong> <Badge state={(d.state ?? '').toUpperCase()} label={d.state} />{' '}
        <span class="muted small">
          {fmtTime(d.startTime)} · {d.id}
        </span>
      </header>
      <div class="timeline" role="img" aria-label={`Timeline: ${marks.filter((m) => m[1] !== undefined).map(([k, v]) => `${k} at ${fmtDuration(v!)}`).join(', ') || 'started'}`}>
        <span class="tl-seg tl-fenced" style={{ left: 0, width: pct(healed ?? elapsed) }} />
        {d.detectionSeconds ? <span class="tl-seg tl-detect" style={{ left: 0, width: pct(d.detectionSeconds) }} /> : null}
        {healed !== undefined && <span class="tl-seg tl-failback" style={{ left: pct(healed), width: pct(d.failbackSeconds ?? 0) }} />}
        {marks.map(([k, v]) =>
          v === undefined ? null : (
            <span key={k} class="tl-mark" style={{ left: pct(v) }} title={`${k} at +${fmtDuration(v)}`} />
          ),
        )}
      </div>
      <ol class="tl-legend">
        <li>fenced +0s</li>
        {marks.map(([k, v]) => v !== undefined && <li key={k}>{k} +{fmtDuration(v)}</li>)}
      </ol>
      <dl class="facts">
        <div class="fact">
          <dt>Detection</dt>
          <dd data-testid="detection">{d.detectionSeconds ? `${d.detectionSeconds.toFixed(1)}s` : '…'}</dd>
        </div>
        <div class="fact">
          <dt>Relocation</dt>
          <dd data-testid="relocation">{d.relocationSeconds ? `${d.relocationSeconds.toFixed(1)}s` : '…'}</dd>
        </div>
        <div class="fact">
          <dt>Failback</dt>
          <dd data-testid="failback">{d.failbackSeconds ? `${d.failbackSeconds.toFixed(1)}s` : '…'}</dd>
        </div>
        <div class="fact">
          <dt>Moved</dt>
          <dd>
            {d.moved?.length ?? 0} jobs{(d.notMoved?.length ?? 0) > 0 && `, ${d.notMoved?.length} not`}
          </dd>
        </div>
      </dl>
      {d.message && <p class="note">{d.message}</p>}
    </article>
  );
}

/** Probes shows this server's gossip probes of a member: a lossy link
 * shows as lost probes before it fails the region. */
function Probes({ probes }: { probes: NonNullable<RegionMember['probes']> }) {
  const lost = probes.lost ?? 0;
  const failed = probes.failed ?? 0;
  return (
    <div
      class={'small probes' + (failed > 0 ? ' failed' : lost > 0 ? ' lossy' : ' muted')}
      data-probes
      title="Direct gossip probes of this member by the server that answered: lost ones had no ack in time (indirect probes may still have reached it); failed ones had none by any way, and made it suspect."
    >
      probes over {probes.window ?? 'the window'}: {probes.sent ?? 0} sent, {lost} lost{failed > 0 ? `, ${failed} failed` : ''}
    </div>
  );
}
