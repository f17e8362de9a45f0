// The job page's updates (with pause, resume, promote, rollback and abort), the
// migrations that moved it, and its config versions with a diff between two.
import { useEffect, useState } from 'preact/hooks';
import { api, type Update, type UpdateAction } from '../api';
import { Badge, Bar, Confirm, Empty, ErrorNote, Section, useNow } from '../components';
import { Link } from '../router';
import { diffLines, hunks, specLines } from '../diff';
import { useCan } from '../session';
import { ACTIVE_MIGRATION, ACTIVE_UPDATE, fmtAgo, migrationState, updateState, useInterval, useLoad } from '../util';

export function Updates({ jobId, tick, configVersion }: { jobId: string; tick: number; configVersion: number }) {
  const now = useNow(5000);
  const updates = useLoad((s) => api.updates(jobId, s), [jobId]);
  const canUpdate = useCan('update-job', { jobId });
  useEffect(() => {
    if (tick > 0) updates.reload();
  }, [tick]);
  const list = [...(updates.data?.updates ?? [])].reverse();
  const act = async (u: Update, a: UpdateAction) => {
    await api.updateAction(u.id, a);
    updates.reload();
  };
  return (
    <Section title="Updates" id="updates">
      <ErrorNote error={updates.error} />
      {list.length === 0 ? (
        <Empty>
          {configVersion > 1
            ? `No rolling update. The config is at v${configVersion} from other changes (a migration's cluster policy among them): see Config.`
            : 'The job was never updated.'}
        </Empty>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Update</th>
                <th scope="col">State</th>
                <th scope="col">Progress</th>
                <th scope="col">Failed</th>
                <th scope="col">Started</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.map((u) => {
                const s = updateState(u.state);
                const active = ACTIVE_UPDATE.has(s) && canUpdate === true;
                return (
                  <tr key={u.id} data-update={u.id}>
                    <td>
                      v{u.fromVersion ?? 0} → v{u.toVersion}
                      <div class="muted small">batch {u.batchSize || 'all'}</div>
                    </td>
                    <td>
                      <Badge state={s} /> {u.paused && <Badge state="PAUSED" />}
                      {u.message && <div class="muted small">{u.message}</div>}
                      {!!u.canary && (
                        <div class="muted small" data-canary>
                          {u.canary} {u.canaryExtra ? 'extra' : ''} {u.canary === 1 ? 'canary' : 'canaries'}
                          {u.canaryExtra && !u.promoted && u.instancesTotal ? ` (instances ${u.instancesTotal - (u.canary ?? 0)}–${u.instancesTotal - 1})` : ''}
                          {u.promoted ? `, promoted by ${u.promotedBy}` : ', waiting for promotion'}
                        </div>
                      )}
                    </td>
                    <td class="wide">
                      <Bar plain label="done" used={u.instancesDone ?? 0} total={u.instancesTotal ?? 0} />
                    </td>
                    <td class="num">
                      {u.instancesFailed ?? 0} / {u.maxFailures ?? 0}
                    </td>
                    <td>{fmtAgo(u.createTime, now)}</td>
                    <td class="actions">
                      {active && !u.paused && (
                        <Confirm label="Pause" title={`Pause update to v${u.toVersion}?`} body="Batches in flight finish; no new batch starts." action={() => act(u, 'pause')} />
                      )}
                      {active && u.paused && (
                        <Confirm label="Resume" title={`Resume update to v${u.toVersion}?`} action={() => act(u, 'resume')} />
                      )}
                      {s === 'ROLLING_FORWARD' && canUpdate === true && !!u.canary && !u.promoted && (
                        <Confirm
                          label="Promote"
                          title={`Promote update to v${u.toVersion}?`}
                          body="The canaries stay on the new config; the rest of the instances move, with the batch size and the SLA."
                          action={() => act(u, 'promote')}
                        />
                      )}
                      {s === 'ROLLING_FORWARD' && canUpdate === true && (
                        <Confirm
                          label="Roll back"
                          title={`Roll back to v${u.fromVersion}?`}
                          body="Moved instances go back to the old config, with the same batch size and SLA."
                          danger
                          action={() => act(u, 'rollback')}
                        />
                      )}
                      {active && (
                        <Confirm
                          label="Abort"
                          title={`Abort update to v${u.toVersion}?`}
                          body="Instances already moved keep the new config; the others stay on theirs."
                          danger
                          action={() => act(u, 'abort')}
                        />
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </Section>
  );
}

/** JobMigrations lists the migrations that moved the job (alone or with its pool). */
export function JobMigrations({ jobId }: { jobId: string }) {
  const now = useNow(5000);
  const all = useLoad((s) => api.migrations(s), []);
  useInterval(() => all.reload(), 5000);
  const list = (all.data?.migrations ?? []).filter((m) => m.jobId === jobId || (m.jobs ?? []).some((j) => j.jobId === jobId));
  if (list.length === 0) return null;
  return (
    <Section title="Migrations" id="migrations">
      <ul class="plain">
        {list.map((m) => {
          const mine = (m.jobs ?? []).find((j) => j.jobId === jobId);
          return (
            <li key={m.id} data-migration={m.id}>
              {m.jobId ? 'to' : `with pool ${m.pool} to`} <strong>{m.toCluster}</strong>
              {mine?.fromCluster && <> from {mine.fromCluster}</>} <Badge state={migrationState(m.state)} />{' '}
              {m.paused && ACTIVE_MIGRATION.has(migrationState(m.state)) && <Badge state="PAUSED" />} {mine && `${mine.moved ?? 0}/${mine.instances ?? 0} moved`}{' '}
              <span class="muted">{fmtAgo(m.createTime, now)}</span>{' '}
              <Link to={`/migrations?id=${encodeURIComponent(m.id)}`}>report</Link>
              {mine?.message && <div class="muted small">{mine.message}</div>}
            </li>
          );
        })}
      </ul>
    </Section>
  );
}

export function ConfigVersions({ jobId, current }: { jobId: string; current: number }) {
  const [from, setFrom] = useState(0);
  const [to, setTo] = useState(0);
  const head = useLoad((s) => api.config(jobId, undefined, s), [jobId, current]);
  const versions = (head.data?.versions ?? []).map(Number);
  const b = to || Number(head.data?.version ?? 0);
  const a = from || (versions.length > 1 ? versions[versions.length - 2] : b);
  const left = useLoad((s) => (a ? api.config(jobId, a, s) : Promise.resolve(undefined)), [jobId, a]);
  const right = useLoad((s) => (b ? api.config(jobId, b, s) : Promise.resolve(undefined)), [jobId, b]);
  const la = left.data?.spec ? specLines(left.data.spec) : [];
  const lb = right.data?.spec ? specLines(right.data.spec) : [];
  const same = a === b;
  const lines = same ? lb.map((text) => ({ op: ' ' as const, text })) : hunks(diffLines(la, lb));
  const pick = (set: (v: number) => void, label: string, value: number) => (
    <label>
      {label}{' '}
      <select value={value} onChange={(e) => set(Number((e.target as HTMLSelectElement).value))}>
        {versions.map((v) => (
          <option key={v} value={v}>
            v{v}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <Section
      title="Config"
      id="config"
      actions={
        versions.length > 0 && (
          <>
            {pick(setFrom, 'From', a)} {pick(setTo, 'to', b)}
          </>
        )
      }
    >
      <ErrorNote error={head.error || left.error || right.error} />
      {!same && lines.length === 0 && <Empty>The two versions are the same.</Empty>}
      <pre class="diff" aria-label={same ? `Config v${b}` : `Changes from v${a} to v${b}`} tabIndex={0}>
        {lines.map((l, i) =>
          l === null ? (
            <div key={i} class="diff-gap">
              ⋯
            </div>
          ) : (
            <div key={i} class={l.op === '+' ? 'diff-add' : l.op === '-' ? 'diff-del' : ''}>
              <span aria-hidden="true">{same ? '' : l.op + ' '}</span>
              {l.op === '+' && <span class="sr-only">added: </span>}
              {l.op === '-' && <span class="sr-only">removed: </span>}
              {l.text}
            </div>
          ),
        )}
      </pre>
    </Section>
  );
}
