// Which regions the UI's own region can reach. Every page reads through
// one gateway, whose region gathers the others' jobs, hosts and pools; a
// region it cannot reach (failed or suspect, as its gossip sees it; its
// own region cut off from the rest looks the same from inside) is missing
// from every page. The shell says so, and pages that claim "every region"
// say which are left out. One small read of the regions every few seconds
// serves every page.
import { useEffect, useState } from 'preact/hooks';
import { api, type Region } from './api';

/** How often the regions are read while a page listens. */
const EVERY_MS = 4000;

export interface Reach {
  /** The region of the gateway the UI reads through. */
  self?: string;
  /** Other regions it cannot reach now. */
  cut: Region[];
}

let reach: Reach = { cut: [] };
const listeners = new Set<(r: Reach) => void>();
let timer: number | undefined;

async function read() {
  try {
    const self = reach.self ?? (await api.version()).region;
    const regions = (await api.regions()).regions ?? [];
    const cut = regions.filter((r) => r.name !== self && r.health !== 'alive');
    const key = (c: Region[]) => c.map((r) => `${r.name}:${r.health}:${r.lastSeen}`).join();
    const changed = self !== reach.self || key(cut) !== key(reach.cut);
    reach = { self, cut };
    if (changed) listeners.forEach((l) => l(reach));
  } catch {
    // The server itself out of reach is said by the shell already.
  }
}

/** useReach is the regions the UI's region cannot reach, read again every few seconds. */
export function useReach(): Reach {
  const [r, setR] = useState(reach);
  useEffect(() => {
    listeners.add(setR);
    if (timer === undefined) {
      void read();
      timer = window.setInterval(() => document.visibilityState !== 'hidden' && void read(), EVERY_MS);
    }
    return () => {
      listeners.delete(setR);
      if (!listeners.size) {
        window.clearInterval(timer);
        timer = undefined;
      }
    };
  }, []);
  return r;
}

/** names lists region names for a sentence: "central and west". */
export function names(regions: Region[]): string {
  const n = regions.map((r) => r.name);
  return n.length <= 1 ? n.join('') : n.slice(0, -1).join(', ') + ' and ' + n[n.length - 1];
}
