// Building blocks the pages share.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { fmtNum, stateTone } from './util';

export function Badge({ state, label }: { state: string; label?: string }) {
  return (
    <span class={`badge ${stateTone(state)}`} data-state={state}>
      {label ?? state}
    </span>
  );
}

export function ErrorNote({ error }: { error?: string }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error}
    </p>
  );
}

export function Section({ title, id, children, actions }: { title: string; id?: string; children: ComponentChildren; actions?: ComponentChildren }) {
  const hid = (id ?? title.toLowerCase().replace(/[^a-z0-9]+/g, '-')) + '-h';
  return (
    <section class="card" aria-labelledby={hid} id={id}>
      <div class="card-head">
        <h2 id={hid}>{title}</h2>
        {actions && <div class="actions">{actions}</div>}
      </div>
      {children}
    </section>
  );
}

/** Bar shows used of total as a meter with its figures. */
export function Bar({ label, used, total, text }: { label: string; used: number; total: number; text?: string }) {
  const pct = total > 0 ? Math.min(100, (used / total) * 100) : 0;
  const tone = pct >= 90 ? 'hot' : pct >= 70 ? 'warm' : '';
  return (
    <div class="bar-row">
      <span class="bar-label">{label}</span>
      <div class={`bar ${tone}`} role="meter" aria-label={label} aria-valuemin={0} aria-valuemax={total} aria-valuenow={used}>
        <div class="bar-fill" style={{ width: `${pct}%` }} />
      </div>
      <span class="bar-text">{text ?? `${fmtNum(used, 2)} / ${fmtNum(total, 2)}`}</span>
    </div>
  );
}

/** StateCounts shows how many are in each state as a stacked bar and a legend. */
export function StateCounts({ counts, order, label }: { counts: Record<string, number>; order: string[]; label: string }) {
  const entries = order.filter((s) => (counts[s] ?? 0) > 0).map((s) => [s, counts[s]] as const);
  for (const [s, n] of Object.entries(counts)) if (!order.includes(s) && n > 0) entries.push([s, n]);
  const total = entries.reduce((a, [, n]) => a + n, 0);
  return (
    <div class="counts">
      <div class="stack" role="img" aria-label={`${label}: ` + entries.map(([s, n]) => `${n} ${s}`).join(', ')}>
        {entries.map(([s, n]) => (
          <div key={s} class={`stack-part ${stateTone(s)}`} style={{ flexGrow: n }} title={`${s}: ${n}`} />
        ))}
      </div>
      <ul class="legend">
        {entries.map(([s, n]) => (
          <li key={s} data-state={s}>
            <Badge state={s} /> <span class="count">{fmtNum(n)}</span>
          </li>
        ))}
        {total === 0 && <li class="muted">none</li>}
      </ul>
    </div>
  );
}

/**
 * Confirm is a button that asks before it acts: a modal dialog (Escape or
 * Cancel closes it) whose Confirm button runs the action and shows its error.
 */
export function Confirm({
  label,
  title,
  body,
  action,
  danger,
  disabled,
  children,
}: {
  label: string;
  title: string;
  body?: ComponentChildren;
  action: () => Promise<unknown>;
  danger?: boolean;
  disabled?: boolean;
  children?: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const open = () => {
    setError(undefined);
    ref.current?.showModal();
  };
  const run = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await action();
      ref.current?.close();
    } catch (err) {
      setError(String((err as Error)?.message ?? err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" class={danger ? 'danger' : ''} onClick={open} disabled={disabled}>
        {label}
      </button>
      <dialog ref={ref} aria-label={title}>
        <form method="dialog" onSubmit={run}>
          <h3>{title}</h3>
          {body && <div class="dialog-body">{body}</div>}
          {children}
          <ErrorNote error={error} />
          <div class="dialog-actions">
            <button type="button" onClick={() => ref.current?.close()}>
              Cancel
            </button>
            <button type="submit" class={danger ? 'danger' : 'primary'} disabled={busy}>
              {busy ? 'Working…' : 'Confirm'}
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}

/** Pager moves through pages of `size` of a list of `total`. */
export function Pager({ offset, size, total, onChange, label }: { offset: number; size: number; total: number; onChange: (offset: number) => void; label: string }) {
  const pages = Math.max(1, Math.ceil(total / size));
  const page = Math.floor(offset / size) + 1;
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" onClick={() => onChange(0)} disabled={page <= 1} aria-label="First page">
        «
      </button>
      <button type="button" onClick={() => onChange(offset - size)} disabled={page <= 1} aria-label="Previous page">
        ‹
      </button>
      <span aria-live="polite">
        {total === 0 ? 'none' : `${fmtNum(offset + 1)}–${fmtNum(Math.min(total, offset + size))} of ${fmtNum(total)}`}
      </span>
      <button type="button" onClick={() => onChange(offset + size)} disabled={page >= pages} aria-label="Next page">
        ›
      </button>
      <button type="button" onClick={() => onChange((pages - 1) * size)} disabled={page >= pages} aria-label="Last page">
        »
      </button>
    </nav>
  );
}

/** SortHeader is a column header that sorts the table by its key. */
export function SortHeader({ k, label, sort, onSort }: { k: string; label: string; sort: string; onSort: (s: string) => void }) {
  const desc = sort === '-' + k;
  const asc = sort === k;
  return (
    <th scope="col" aria-sort={asc ? 'ascending' : desc ? 'descending' : 'none'}>
      <button type="button" class="sort" onClick={() => onSort(asc ? '-' + k : k)}>
        {label}
        <span aria-hidden="true">{asc ? ' ▲' : desc ? ' ▼' : ''}</span>
      </button>
    </th>
  );
}

/** Now re-renders its child every second, for "5s ago" figures. */
export function useNow(ms = 1000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const id = window.setInterval(() => setNow(Date.now()), ms);
    return () => window.clearInterval(id);
  }, [ms]);
  return now;
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="muted empty">{children}</p>;
}

/** Title is the page's heading; it takes focus when the page changes. */
export function Title({ children, sub }: { children: ComponentChildren; sub?: ComponentChildren }) {
  return (
    <div class="page-title">
      <h1 tabIndex={-1}>{children}</h1>
      {sub && <p class="muted">{sub}</p>}
    </div>
  );
}
