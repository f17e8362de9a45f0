// One stream of job and task events (GET /v1/events, newline-delimited JSON
// from the gateway) shared by every page: pages subscribe, the stream
// reconnects by itself, and subscribers hear when it does so that they can
// read again what they may have missed. It starts when the first page that
// follows it is shown (after signing in, never before: the shell renders no
// page until then) and stops when the server refuses the caller.
import { useEffect, useRef, useState } from 'preact/hooks';
import { setReachable, type PelotonEvent } from './api';
import { authHeaders, unauthorized } from './session';

type Listener = (ev: PelotonEvent) => void;
type StatusListener = (s: StreamStatus) => void;

export type StreamStatus = 'connecting' | 'live' | 'down';

const listeners = new Set<Listener>();
const statusListeners = new Set<StatusListener>();
let status: StreamStatus = 'connecting';
let started = false;

function setStatus(s: StreamStatus) {
  if (s === status) return;
  status = s;
  statusListeners.forEach((l) => l(s));
}

/** Refused: the server said 401; the stream waits for the next start. */
class Refused extends Error {}

async function readStream(signal: AbortSignal) {
  let resp: Response;
  try {
    resp = await fetch('/v1/events', { signal, headers: { Accept: 'application/json', ...authHeaders() } });
  } catch (e) {
    if (!signal.aborted) setReachable(false);
    throw e;
  }
  setReachable(true);
  if (resp.status === 401) {
    unauthorized('the event stream was refused');
    throw new Refused();
  }
  if (!resp.ok || !resp.body) throw new Error(`events: HTTP ${resp.status}`);
  setStatus('live');
  const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (!line) continue;
      let msg: { result?: PelotonEvent; error?: unknown };
      try {
        msg = JSON.parse(line);
      } catch {
        continue;
      }
      if (msg.result) {
        const ev = msg.result;
        listeners.forEach((l) => l(ev));
      }
    }
  }
}

function start() {
  if (started) return;
  started = true;
  const controller = new AbortController();
  window.addEventListener('pagehide', () => controller.abort());
  (async () => {
    let backoff = 500;
    while (!controller.signal.aborted) {
      try {
        await readStream(controller.signal);
        backoff = 500;
      } catch (e) {
        if (e instanceof Refused) {
          // Signed out: a page shown after signing in again starts it anew.
          started = false;
          setStatus('connecting');
          return;
        }
        // reconnect below
      }
      if (controller.signal.aborted) return;
      setStatus('down');
      await new Promise((r) => setTimeout(r, backoff));
      backoff = Math.min(backoff * 2, 5000);
      setStatus('connecting');
    }
  })();
}

/**
 * subscribe calls fn for every event until the returned function is
 * called; it does not start the stream (useEvents and useStreamStatus do).
 */
export function subscribe(fn: Listener): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

export function useStreamStatus(): StreamStatus {
  const [s, set] = useState(status);
  useEffect(() => {
    start();
    statusListeners.add(set);
    set(status);
    return () => statusListeners.delete(set);
  }, []);
  return s;
}

/** useEvents calls fn (the latest one given) for every event while mounted. */
export function useEvents(fn: Listener) {
  const ref = useRef(fn);
  ref.current = fn;
  useEffect(() => {
    start();
    return subscribe((ev) => ref.current(ev));
  }, []);
}

/**
 * useThrottled returns a function that runs fn at most once per `ms`,
 * trailing: many events in a burst cause one read, soon after the burst
 * starts and once more after it ends.
 */
export function useThrottled(fn: () => void, ms: number): () => void {
  const ref = useRef(fn);
  ref.current = fn;
  const timer = useRef<number | undefined>(undefined);
  useEffect(() => () => window.clearTimeout(timer.current), []);
  const trigger = useRef(() => {
    if (timer.current !== undefined) return;
    timer.current = window.setTimeout(() => {
      timer.current = undefined;
      ref.current();
    }, ms);
  });
  return trigger.current;
}

// useReloadAfterStreamDown calls reload when the event stream is live again
// after it was down: the events sent meanwhile were missed.
export function useReloadAfterStreamDown(reload: () => void): void {
  const stream = useStreamStatus();
  const wasDown = useRef(false);
  useEffect(() => {
    if (stream === 'down') wasDown.current = true;
    else if (stream === 'live' && wasDown.current) {
      wasDown.current = false;
      reload();
    }
  }, [stream]);
}
