import { useEffect, useRef, useState } from 'preact/hooks';
import { findHead } from './lib/head.js';
import { followLog, createSharedFollower, keepListed, type LogEvent } from './lib/livelog.js';
import { authHeaders, get, needKey, qs, pbPath, isUnauthenticated, type AutoEvent } from './api';
import { createStore } from './store';

export type LiveState = 'off' | 'connecting' | 'live' | 'reconnecting' | 'unavailable';
export const liveState = createStore<LiveState>('off');

type Listener = (event: AutoEvent) => void;
/** Unsubscribes; `ready` is the seq after which every event is delivered (null: not known yet). */
export type Subscription = (() => void) & { ready: Promise<number | null> };

/** How many events each probe for the log's end lists, and how many probes go at once. */
const END_PAGE = 50;
const END_PARALLEL = 4;

/**
 * The seq of the newest event of the playbook's log (0 when it has none), found with a few
 * rounds of `list_playbook_events?after=N&limit=50`; `from` is a seq known to be recorded.
 */
export function logEnd(org: string, pb: string, signal?: AbortSignal, from = 0): Promise<number> {
  return findHead(
    (after) => get<{ events: AutoEvent[]; next: string | null }>(`${pbPath(org, pb)}/events${qs({ after, limit: END_PAGE })}`, signal),
    { from, parallel: END_PARALLEL },
  );
}

function streamUrl(org: string, pb: string, after: number, filter: { run_id?: string; type?: string }) {
  return `${pbPath(org, pb)}/events/stream${qs({ after, run_id: filter.run_id, type: filter.type })}`;
}

function refused(status: number, body: string) {
  let problem = null;
  try {
    problem = JSON.parse(body);
  } catch {
    /* not JSON */
  }
  if (isUnauthenticated(status, problem)) needKey.set(true);
}

/**
 * Follows a playbook's event stream after the seq `after` (a run page from its last event, the
 * events page from the last it listed), or from the log's end read now. A dropped stream
 * reconnects from the last event seen, or from `after` when none came yet. Returns the
 * function that stops.
 */
export function follow(
  org: string,
  pb: string,
  options: { after: number | 'end'; run_id?: string; type?: string; report?: boolean },
  onEvent: Listener,
): () => void {
  const report = options.report ?? false;
  if (report) liveState.set('connecting');
  return followLog({
    after: options.after,
    end: (from, signal) => logEnd(org, pb, signal, from),
    url: (after) => streamUrl(org, pb, after, options),
    headers: authHeaders(),
    onOpen: () => report && liveState.set('live'),
    onError: () => report && liveState.set('reconnecting'),
    onTrouble: () => report && liveState.set('reconnecting'),
    onFatal: (status, body) => {
      refused(status, body);
      if (report) liveState.set('unavailable');
    },
    onEvent: onEvent as (e: LogEvent) => void,
  });
}

// One shared follower per playbook, for the lists that stay current (runs, inbox, the inbox
// count). It starts with its first listener from the log's end, stops a little after its last
// one leaves (so moving between pages keeps it), and connects again with a new key from where
// it was.
type Shared = ReturnType<typeof createSharedFollower>;
const shared = new Map<string, Shared>();

function sharedOf(org: string, pb: string): Shared {
  const key = `${org}\n${pb}`;
  let entry = shared.get(key);
  if (!entry) {
    entry = createSharedFollower({
      open: (from, handlers) => {
        liveState.set('connecting');
        return followLog({
          after: from.after,
          hint: from.hint,
          end: (start, signal) => logEnd(org, pb, signal, start),
          url: (after) => streamUrl(org, pb, after, {}),
          headers: authHeaders(),
          onOpen: () => liveState.set('live'),
          onError: () => liveState.set('reconnecting'),
          onTrouble: (error) => {
            liveState.set('reconnecting');
            handlers.onTrouble(error);
          },
          onFatal: (status, body) => {
            refused(status, body);
            liveState.set('unavailable');
          },
          onStop: handlers.onStop,
          onPosition: handlers.onPosition,
          onEvent: handlers.onEvent,
        });
      },
    });
    shared.set(key, entry);
  }
  return entry;
}

/**
 * Listens to the playbook's log from the shared follower: `listener` gets every event recorded
 * after the subscription's `ready` seq; `onReset`, when the follower could not keep its place,
 * asks to list again.
 */
export function subscribe(org: string, pb: string, listener: Listener, onReset?: () => void): Subscription {
  return sharedOf(org, pb).subscribe({ onEvent: listener as (e: LogEvent) => void, onReset }) as Subscription;
}

/** The seq up to which the playbook's shared follower delivered everything, when it runs. */
export function knownEnd(org: string, pb: string): number | null {
  return shared.get(`${org}\n${pb}`)?.position ?? null;
}

/** Connects every follower again (a new key), each from where it was: the listeners stay. */
export function restartShared() {
  for (const entry of shared.values()) entry.restart();
}

/**
 * Keeps a listing current: lists once the shared follower knows its place, then calls `apply`
 * with the events delivered since (those during the listing after it); `relist()` lists again.
 */
export function keepListing<T>(
  org: string,
  pb: string,
  o: { list: (signal: AbortSignal) => Promise<T>; onList: (data: T) => void; apply?: (events: AutoEvent[]) => void; onError?: (error: unknown) => void },
): { stop: () => void; relist: () => void } {
  return keepListed<T>({
    subscribe: (listener) => sharedOf(org, pb).subscribe(listener) as Subscription,
    list: o.list,
    onList: o.onList,
    apply: o.apply as ((events: LogEvent[]) => void) | undefined,
    onError: o.onError,
  });
}

/**
 * A listing that stays current: loaded once the stream's place is known (nothing between the
 * listing and the stream is missed), and loaded again (at most once per `ms`) after each event
 * for which `relevant` is true.
 */
export function useLiveListing<T>(
  org: string,
  pb: string,
  load: (signal: AbortSignal) => Promise<T>,
  deps: unknown[],
  relevant: (event: AutoEvent) => boolean,
  ms = 500,
): { data: T | undefined; error: unknown; loading: boolean; reload: () => void } {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: null, loading: true });
  const loadRef = useRef(load);
  loadRef.current = load;
  const relevantRef = useRef(relevant);
  relevantRef.current = relevant;
  const control = useRef<{ relist: () => void } | null>(null);
  useEffect(() => {
    setState({ data: undefined, error: null, loading: true });
    let timer: number | null = null;
    const kept = keepListing<T>(org, pb, {
      list: (signal) => loadRef.current(signal),
      onList: (data) => setState({ data, error: null, loading: false }),
      onError: (error) => setState((s) => ({ data: s.data, error, loading: false })),
      apply: (events) => {
        if (timer !== null || !events.some((e) => relevantRef.current(e))) return;
        timer = window.setTimeout(() => {
          timer = null;
          kept.relist();
        }, ms);
      },
    });
    control.current = kept;
    return () => {
      if (timer !== null) clearTimeout(timer);
      kept.stop();
      control.current = null;
    };
  }, [org, pb, ms, JSON.stringify(deps)]);
  return { ...state, reload: () => control.current?.relist() };
}
