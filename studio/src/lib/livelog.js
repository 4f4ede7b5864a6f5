// Following a playbook's log without gaps. The Studio's live lists (runs, inbox, the inbox
// count) are drawn from a listing and kept current from the log's event stream; an event that
// happens between the listing and the stream, or while a dropped stream reconnects, must not be
// lost. So a follower always knows its place in the log, as a seq:
//
// - `followLog` starts from a seq, or from the log's end read first (`end()`, with probes of the
//   listing), never from an `after=end` it could not come back to: a stream that drops before its
//   first message reconnects from that seq, and after a message from the last one seen
//   (Last-Event-ID).
// - `createSharedFollower` is one such follower shared by every list open on a playbook; a list
//   that subscribes learns the seq from which everything will be delivered to it (`ready`).
// - `keepListed` lists only once that seq is known, so the listing reflects at least every event
//   up to it, and applies the events delivered meanwhile after the listing: an event may come
//   twice (in the listing and from the stream), never not at all; lists merge by id.
import { followStream } from './sse.js';

/**
 * @typedef {{ seq: number, type: string, run_id?: string, subject?: string, data?: any, time?: string }} LogEvent
 */

const FATAL = new Set([400, 401, 403, 404, 422]);

/** @param {number} ms @param {AbortSignal} [signal] */
function defaultSleep(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    if (signal) signal.addEventListener('abort', () => { clearTimeout(timer); resolve(undefined); }, { once: true });
  });
}

/**
 * Follows the log's stream from `after` (a seq), or from its end as `end()` reads it, until
 * stopped or refused. Returns the function that stops it.
 * @param {{
 *   after: number | 'end',
 *   hint?: number | null,
 *   end?: (from: number, signal: AbortSignal) => Promise<number>,
 *   url: (after: number) => string,
 *   headers?: Record<string, string>,
 *   fetch?: typeof fetch,
 *   sleep?: (ms: number, signal?: AbortSignal) => Promise<void>,
 *   retryMs?: number,
 *   maxRetryMs?: number,
 *   onPosition?: (seq: number) => void,
 *   onEvent: (event: LogEvent) => void,
 *   onOpen?: () => void,
 *   onError?: (error: unknown) => void,
 *   onTrouble?: (error: unknown) => void,
 *   onFatal?: (status: number, body: string) => void,
 *   onStop?: () => void,
 * }} o
 * @returns {() => void}
 */
export function followLog(o) {
  const controller = new AbortController();
  const signal = controller.signal;
  const sleep = o.sleep || defaultSleep;
  (async () => {
    let after = o.after;
    let delay = o.retryMs ?? 1000;
    // The end is read before the stream opens, so the follower knows its place from the start.
    while (after === 'end') {
      if (!o.end) throw new Error('followLog: after=end needs end()');
      try {
        after = await o.end(o.hint ?? 0, signal);
      } catch (error) {
        if (signal.aborted) return;
        const status = /** @type {any} */ (error)?.status;
        if (typeof status === 'number' && FATAL.has(status)) {
          const problem = /** @type {any} */ (error)?.problem;
          if (o.onFatal) o.onFatal(status, problem ? JSON.stringify(problem) : '');
          if (o.onStop) o.onStop();
          return;
        }
        if (o.onTrouble) o.onTrouble(error);
        await sleep(delay, signal);
        delay = Math.min(o.maxRetryMs ?? 15000, delay * 2);
      }
    }
    if (signal.aborted) return;
    if (o.onPosition) o.onPosition(after);
    let fatal = false;
    await followStream({
      url: o.url(after),
      headers: o.headers,
      signal,
      fetch: o.fetch,
      sleep: o.sleep,
      retryMs: o.retryMs,
      maxRetryMs: o.maxRetryMs,
      onOpen: o.onOpen,
      onError: o.onError,
      onFatal: (status, body) => {
        fatal = true;
        if (o.onFatal) o.onFatal(status, body);
      },
      onMessage: (m) => {
        // The server tells a failure to read the log as an `error` message and ends the
        // stream: followStream reconnects from the last id.
        if (m.event === 'error' || !m.data) return;
        let event;
        try {
          event = JSON.parse(m.data);
        } catch {
          return;
        }
        if (!event || typeof event !== 'object') return;
        if (typeof event.seq !== 'number' && /^\d+$/.test(m.id)) event.seq = Number(m.id);
        o.onEvent(event);
      },
    });
    if (fatal && o.onStop && !signal.aborted) o.onStop();
  })().catch((error) => {
    if (!signal.aborted && o.onError) o.onError(error);
  });
  return () => controller.abort();
}

/**
 * @typedef {{ onEvent: (event: LogEvent) => void, onReset?: () => void }} Listener
 * @typedef {(() => void) & { ready: Promise<number | null> }} Subscription
 * @typedef {{
 *   onPosition: (seq: number) => void,
 *   onEvent: (event: LogEvent) => void,
 *   onTrouble: (error: unknown) => void,
 *   onStop: () => void,
 * }} Handlers
 */

/**
 * One follower of a log for many listeners. It starts with its first listener (from the log's
 * end), stops `idleMs` after its last one leaves, and `restart()` connects it again (a new key)
 * from the last seq it delivered, so its listeners miss nothing.
 *
 * A listener's subscription carries `ready`: the seq after which every event is delivered to
 * it, once known (null when the end could not be read yet: the listener lists anyway, and its
 * `onReset` is called once the follower has its place, to list again).
 * @param {{
 *   open: (from: { after: number | 'end', hint: number | null }, handlers: Handlers) => () => void,
 *   idleMs?: number,
 *   setTimeout?: (fn: () => void, ms: number) => any,
 *   clearTimeout?: (timer: any) => void,
 * }} options
 */
export function createSharedFollower(options) {
  const setTimer = options.setTimeout || ((fn, ms) => setTimeout(fn, ms));
  const clearTimer = options.clearTimeout || ((t) => clearTimeout(t));
  const idleMs = options.idleMs ?? 3000;
  /** @type {Set<Listener>} */
  const listeners = new Set();
  /** @type {(() => void) | null} */
  let stop = null;
  /** @type {number | null} the seq up to which the listeners have been given everything */
  let position = null;
  /** @type {number | null} a seq seen before, where a new search for the end starts */
  let hint = null;
  let gap = false;
  let idle = null;
  /** @type {{ promise: Promise<number | null>, resolve: (v: number | null) => void, settled: boolean }} */
  let ready = deferred();
  let generation = 0;

  function deferred() {
    /** @type {(v: number | null) => void} */
    let resolve = () => {};
    /** @type {Promise<number | null>} */
    const promise = new Promise((r) => { resolve = r; });
    return { promise, resolve, settled: false };
  }
  /** @param {number | null} value */
  function settle(value) {
    if (ready.settled) return;
    ready.settled = true;
    ready.resolve(value);
  }

  function start() {
    const mine = ++generation;
    const current = () => mine === generation;
    if (position === null && ready.settled && !gap) ready = deferred();
    stop = options.open({ after: position ?? 'end', hint }, {
      onPosition(seq) {
        if (!current()) return;
        position = Math.max(position ?? 0, seq);
        settle(position);
        if (gap) {
          gap = false;
          for (const l of [...listeners]) if (l.onReset) l.onReset();
        }
      },
      onEvent(event) {
        if (!current()) return;
        if (typeof event.seq === 'number') position = Math.max(position ?? 0, event.seq);
        for (const l of [...listeners]) l.onEvent(event);
      },
      onTrouble() {
        if (!current() || ready.settled) return;
        gap = true;
        settle(null);
      },
      onStop() {
        if (!current()) return;
        stop = null;
        if (!ready.settled) {
          gap = true;
          settle(null);
        }
      },
    });
  }

  return {
    /**
     * @param {Listener} listener
     * @returns {Subscription}
     */
    subscribe(listener) {
      if (idle !== null) {
        clearTimer(idle);
        idle = null;
      }
      listeners.add(listener);
      if (!stop) start();
      // A listener that comes while the follower runs gets what follows its current place.
      const at = ready.settled ? Promise.resolve(position) : ready.promise;
      const unsubscribe = /** @type {Subscription} */ (() => {
        listeners.delete(listener);
        if (listeners.size === 0 && idle === null) {
          idle = setTimer(() => {
            idle = null;
            if (listeners.size > 0) return;
            if (stop) stop();
            stop = null;
            generation++;
            // Nobody listens: the next start reads the end afresh (from here, to be quick).
            hint = position ?? hint;
            position = null;
            gap = false;
            ready = deferred();
          }, idleMs);
        }
      });
      unsubscribe.ready = at;
      return unsubscribe;
    },
    /** Connects again (a new key), from the last seq delivered. */
    restart() {
      if (stop) stop();
      stop = null;
      generation++;
      if (listeners.size > 0) start();
    },
    /** The seq up to which everything was delivered, when known. */
    get position() {
      return position;
    },
    get running() {
      return stop !== null;
    },
  };
}

/**
 * Keeps a listing current from a shared follower: subscribes, lists once the follower knows
 * its place (so the listing reflects every event up to it), then hands every event delivered
 * since the subscription to `apply`, those that came while the listing was on its way after
 * it. Lists again on the follower's reset and on `relist()`.
 * @template T
 * @param {{
 *   subscribe: (listener: Listener) => Subscription,
 *   list: (signal: AbortSignal) => Promise<T>,
 *   onList: (data: T) => void,
 *   apply?: (events: LogEvent[]) => void,
 *   onError?: (error: unknown) => void,
 * }} o
 * @returns {{ stop: () => void, relist: () => void }}
 */
export function keepListed(o) {
  let stopped = false;
  let listed = false;
  /** @type {LogEvent[]} */
  let queue = [];
  /** @type {AbortController | null} */
  let listing = null;
  const deliver = (events) => {
    if (events.length && o.apply) o.apply(events);
  };
  const relist = async () => {
    if (stopped) return;
    if (listing) listing.abort();
    const controller = new AbortController();
    listing = controller;
    listed = false;
    try {
      const data = await o.list(controller.signal);
      if (stopped || controller.signal.aborted) return;
      o.onList(data);
    } catch (error) {
      if (stopped || controller.signal.aborted || /** @type {any} */ (error)?.name === 'AbortError') return;
      if (o.onError) o.onError(error);
    }
    listing = null;
    listed = true;
    const waiting = queue;
    queue = [];
    deliver(waiting);
  };
  const subscription = o.subscribe({
    onEvent(event) {
      if (stopped) return;
      if (listed) deliver([event]);
      else queue.push(event);
    },
    onReset() {
      relist();
    },
  });
  subscription.ready.then(() => relist());
  return {
    stop() {
      stopped = true;
      if (listing) listing.abort();
      subscription();
    },
    relist,
  };
}
