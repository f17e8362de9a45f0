// Building blocks the pages share.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { UNREACHABLE, isReachable, onReachable } from './api';
import { Link } from './router';
import { fmtNum, shortId, stateTone } from './util';

export function Badge({ state, label }: { state: string; label?: string }) {
  return (
    <span class={`badge ${stateTone(state)}`} data-state={state}>
      {label ?? state}
    </span>
  );
}

/** CopyText is a button that copies text, or selects it where copying is refused. */
export function CopyText({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState(false);
  const ref = useRef<HTMLButtonElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setDone(true);
      window.setTimeout(() => setDone(false), 1500);
    } catch {
      // No clipboard (a page served over plain HTTP from afar): select the
      // text beside the button for the user to copy.
      const prev = ref.current?.previousElementSibling;
      if (prev) window.getSelection()?.selectAllChildren(prev);
    }
  };
  return (
    <button type="button" ref={ref} class="copy" aria-label={label} title={done ? 'Copied' : label} onClick={copy}>
      {done ? 'copied' : 'copy'}
    </button>
  );
}

/** JobId is a job's full id, copyable: ids made in the same minute share their first digits. */
export function JobId({ id }: { id?: string }) {
  if (!id) return null;
  return (
    <span class="job-id">
      <code data-testid="job-id">{id}</code>
      <CopyText text={id} label={`Copy job id ${id}`} />
    </span>
  );
}

/**
 * JobRef names a job in a line of text: its name as a link (name
 * undefined: not known yet), and the end of its id (the random part, which
 * tells jobs of one name apart) with the whole id on hover.
 */
export function JobRef({ id, name }: { id?: string; name?: string }) {
  if (!id) return null;
  return (
    <span class="job-ref" data-job-ref={id}>
      <Link to={`/jobs/${encodeURIComponent(id)}`}>{name === undefined ? 'job' : name || '(no name)'}</Link>{' '}
      <code class="muted small" title={id}>
        {shortId(id)}
      </code>
    </span>
  );
}

export function ErrorNote({ error }: { error?: string }) {
  // The shell says once that the server is out of reach (Unreachable).
  if (!error || error === UNREACHABLE) return null;
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

/** Fact is one term of a list of facts (a dl.facts). */
export function Fact({ k, v }: { k: string; v: ComponentChildren }) {
  return (
    <div class="fact">
      <dt>{k}</dt>
      <dd>{v}</dd>
    </div>
  );
}

/** Bar shows used of total as a meter with its figures. */
export function Bar({ label, used, total, text, plain }: { label: string; used: number; total: number; text?: string; plain?: boolean }) {
  const pct = total > 0 ? Math.min(100, (used / total) * 100) : 0;
  // plain: full is fine here (a host packed with work), no warning colours.
  const tone = plain ? '' : pct >= 90 ? 'hot' : pct >= 70 ? 'warm' : '';
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
  wide,
  onOpen,
  children,
}: {
  label: string;
  title: string;
  body?: ComponentChildren;
  action: () => Promise<unknown>;
  danger?: boolean;
  disabled?: boolean;
  /** A dialog wide enough for an editor. */
  wide?: boolean;
  /** Called as the dialog opens, to read what it shows. */
  onOpen?: () => void;
  children?: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const open = () => {
    setError(undefined);
    onOpen?.();
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
      <dialog ref={ref} aria-label={title} class={wide ? 'wide' : undefined}>
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
export function Pager({
  offset,
  size,
  total,
  onChange,
  label,
  noLast,
}: {
  offset: number;
  size: number;
  total: number;
  onChange: (offset: number) => void;
  label: string;
  /** Pages reached one from the next only: no button to the last. */
  noLast?: boolean;
}) {
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
      {!noLast && (
        <button type="button" onClick={() => onChange((pages - 1) * size)} disabled={page >= pages} aria-label="Last page">
          »
        </button>
      )}
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

/** SortHeaders is a table's header row: [key, label] columns sort by their key; a column without a key does not sort. */
export function SortHeaders({ cols, sort, onSort }: { cols: [string, string][]; sort: string; onSort: (s: string) => void }) {
  return (
    <tr>
      {cols.map(([k, label]) =>
        k ? (
          <SortHeader key={label} k={k} label={label} sort={sort} onSort={onSort} />
        ) : (
          <th key={label} scope="col">
            {label}
          </th>
        ),
      )}
    </tr>
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

/** Unreachable says, once for the whole page, that the server does not answer. */
export function Unreachable() {
  const [ok, setOk] = useState(isReachable());
  useEffect(() => onReachable(setOk), []);
  if (ok) return null;
  return (
    <p class="error banner" role="alert" data-testid="unreachable">
      {UNREACHABLE}
    </p>
  );
}
