// Hosts: per region and cluster, their state, what is allocated on them,
// their labels; drain and undrain.
import { useRef } from 'preact/hooks';
import { api, type Host } from '../api';
import { Badge, Bar, Confirm, Empty, ErrorNote, Section, Title, useNow } from '../components';
import { useEvents, useThrottled } from '../events';
import { setQuery, useLocation } from '../router';
import { fmtAgo, fmtMem, hostState, useInterval, useLoad } from '../util';
import { useCan } from '../session';

const STATES = ['UP', 'DRAINING', 'DRAINED', 'DOWN'];
/** Labels every host has that say nothing new. */
const NOISE = new Set(['hostname', 'peloton.io/host']);

function matches(h: Host, q: string): boolean {
  const words = q.toLowerCase().split(/\s+/).filter(Boolean);
  const hay = [h.id, h.hostname ?? '', h.hostPool ?? '', ...Object.entries(h.labels ?? {}).map(([k, v]) => `${k}=${v}`)].map((s) =>
    s.toLowerCase(),
  );
  return words.every((w) => hay.some((x) => x.includes(w)));
}

export function HostsPage() {
  const allowed = useCan('manage-host');
  const canManage = allowed === true;
  const loc = useLocation();
  const now = useNow(2000);
  const q = loc.query.get('q') ?? '';
  const region = loc.query.get('region') ?? '';
  const cluster = loc.query.get('cluster') ?? '';
  const state = loc.query.get('state') ?? '';
  const hosts = useLoad((s) => api.hosts(s), []);
  useInterval(() => hosts.reload(), 2000);
  const reload = useThrottled(() => hosts.reload(), 1000);
  useEvents((ev) => {
    if (ev.hostPoolMove || (ev.task && ev.task.host)) reload();
  });

  const all = hosts.data?.hosts ?? [];
  const regions = [...new Set(all.map((h) => h.region ?? ''))].sort();
  const clusters = [...new Set(all.map((h) => h.cluster ?? ''))].sort();
  const shown = all.filter(
    (h) =>
      (!region || h.region === region) &&
      (!cluster || h.cluster === cluster) &&
      (!state || hostState(h.state) === state) &&
      matches(h, q),
  );
  const groups = new Map<string, Host[]>();
  for (const h of shown) {
    const k = `${h.region ?? ''} · ${h.cluster ?? ''} (${h.kind ?? ''})`;
    groups.set(k, [...(groups.get(k) ?? []), h]);
  }

  return (
    <>
      <Title sub="Hosts as the regions' host managers report them.">Hosts</Title>
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          Search
          <input type="search" value={q} placeholder="host, label=value…" onInput={(e) => setQuery({ q: (e.target as HTMLInputElement).value })} />
        </label>
        <Select label="Region" value={region} options={regions} onChange={(v) => setQuery({ region: v })} />
        <Select label="Cluster" value={cluster} options={clusters} onChange={(v) => setQuery({ cluster: v })} />
        <Select label="State" value={state} options={STATES} onChange={(v) => setQuery({ state: v })} />
      </form>
      <ErrorNote error={hosts.error} />
      {!hosts.loading && shown.length === 0 && <Empty>No host matches.</Empty>}
      {[...groups.entries()]
        .sort((a, b) => a[0].localeCompare(b[0]))
        .map(([k, list]) => (
          <Section key={k} title={k}>
            <div class="table-wrap">
              <table class="hosts" data-can-manage={allowed === undefined ? 'asking' : String(allowed)}>
                <thead>
                  <tr>
                    <th scope="col">Host</th>
                    <th scope="col">State</th>
                    <th scope="col">Allocated</th>
                    <th scope="col">Tasks</th>
                    <th scope="col">Labels</th>
                    <th scope="col">Last seen</th>
                    <th scope="col">Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((h) => (
                    <HostRow key={`${h.region}/${h.id}`} h={h} now={now} onChange={hosts.reload} canManage={canManage} />
                  ))}
                </tbody>
              </table>
            </div>
          </Section>
        ))}
    </>
  );
}

function Select({ label, value, options, onChange }: { label: string; value: string; options: string[]; onChange: (v: string) => void }) {
  return (
    <label>
      {label}
      <select value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        <option value="">any</option>
        {options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </label>
  );
}

function HostRow({ h, now, onChange, canManage }: { h: Host; now: number; onChange: () => void; canManage: boolean }) {
  const s = hostState(h.state);
  const reason = useRef<HTMLInputElement>(null);
  const labels = Object.entries(h.labels ?? {}).filter(([k]) => !NOISE.has(k));
  return (
    <tr data-host={h.id} data-region={h.region} data-state={s}>
      <th scope="row">
        {h.hostname ?? h.id}
        <div class="muted small">
          {h.id} · host pool {h.hostPool}
          {h.hostPoolTarget && ` → ${h.hostPoolTarget}`}
        </div>
      </th>
      <td>
        <Badge state={s} />
        {h.drainReason && <div class="muted small">{h.drainReason}</div>}
      </td>
      <td class="wide">
        <Bar label="cpu" used={h.allocated?.cpu ?? 0} total={h.capacity?.cpu ?? 0} />
        <Bar
          label="mem"
          used={h.allocated?.memMb ?? 0}
          total={h.capacity?.memMb ?? 0}
          text={`${fmtMem(h.allocated?.memMb)} / ${fmtMem(h.capacity?.memMb)}`}
        />
        {(h.capacity?.gpu ?? 0) > 0 && <Bar label="gpu" used={h.allocated?.gpu ?? 0} total={h.capacity?.gpu ?? 0} />}
      </td>
      <td class="num">{h.tasks ?? 0}</td>
      <td>
        <ul class="chips" aria-label="Labels">
          {labels.map(([k, v]) => (
            <li key={k}>
              {k}={v}
            </li>
          ))}
        </ul>
      </td>
      <td>{fmtAgo(h.lastSeen, now)}</td>
      <td class="actions">
        {!canManage ? null : s === 'UP' ? (
          <Confirm
            label="Drain"
            title={`Drain ${h.id}?`}
            body="It takes no new work; service instances move off under their SLA, batch tasks finish."
            action={async () => {
              await api.drain(h, reason.current?.value || 'drained from the web UI');
              onChange();
            }}
          >
            <label class="block">
              Reason
              <input ref={reason} type="text" name="reason" placeholder="kernel upgrade" />
            </label>
          </Confirm>
        ) : (
          <Confirm
            label="Undrain"
            title={`Put ${h.id} back into service?`}
            action={async () => {
              await api.undrain(h);
              onChange();
            }}
          />
        )}
      </td>
    </tr>
  );
}
