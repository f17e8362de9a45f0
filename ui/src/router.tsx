// A small history router: every page has its own address under /ui/ that a
// team lead can send as a link; the gateway answers index.html for them.
import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/ui';

export interface Location {
  /** Path below /ui, starting with "/". */
  path: string;
  query: URLSearchParams;
}

function current(): Location {
  let path = window.location.pathname;
  if (path.startsWith(BASE)) path = path.slice(BASE.length);
  if (!path.startsWith('/')) path = '/' + path;
  return { path, query: new URLSearchParams(window.location.search) };
}

const listeners = new Set<() => void>();
window.addEventListener('popstate', () => listeners.forEach((l) => l()));

/** navigate goes to a path below /ui ("/jobs?q=x"); replace keeps history short. */
export function navigate(to: string, replace = false) {
  const url = BASE + to;
  if (replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  listeners.forEach((l) => l());
  if (!replace) window.scrollTo(0, 0);
}

/** setQuery changes the query of the current page in place. */
export function setQuery(changes: Record<string, string | number | undefined>) {
  const loc = current();
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined || v === '' || v === 0) loc.query.delete(k);
    else loc.query.set(k, String(v));
  }
  const q = loc.query.toString();
  navigate(loc.path + (q ? '?' + q : ''), true);
}

export function useLocation(): Location {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const l = () => setLoc(current());
    listeners.add(l);
    return () => listeners.delete(l);
  }, []);
  return loc;
}

/** match returns the named segments of pattern ("/jobs/:id") in path, or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split('/').filter(Boolean);
  const s = path.split('/').filter(Boolean);
  if (p.length !== s.length) return null;
  const out: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    if (p[i].startsWith(':')) out[p[i].slice(1)] = decodeURIComponent(s[i]);
    else if (p[i] !== s[i]) return null;
  }
  return out;
}

type LinkProps = Omit<JSX.HTMLAttributes<HTMLAnchorElement>, 'href'> & { to: string; children?: ComponentChildren };

/** Link is an anchor that navigates in place (and opens in a new tab as usual). */
export function Link({ to, children, ...rest }: LinkProps) {
  return (
    <a
      {...rest}
      href={BASE + to}
      onClick={(e: MouseEvent) => {
        if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}
