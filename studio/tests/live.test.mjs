// The live lists against a small model of the server's log and its event stream: the stream
// resumes from the last id it saw (or from the seq it opened at, before any message), and a list
// drawn from a listing misses no event recorded between the listing and the stream.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { followLog, createSharedFollower, keepListed } from '../src/lib/livelog.js';
import { findHead } from '../src/lib/head.js';

/**
 * The server's log of one playbook: `GET /events?after=&limit=` (the listing),
 * `GET /events/stream?after=N|end` with Last-Event-ID (the stream), and `GET /runs` (a listing
 * made from the log: the run ids of its run_started events). Streams can be dropped.
 */
function fakeServer() {
  const log = [];
  const streams = new Set();
  const calls = [];
  const hooks = { beforeList: null, afterList: null, beforeStream: null };
  const enc = new TextEncoder();
  function append(fields) {
    const event = { id: `e${log.length + 1}`, seq: log.length + 1, time: new Date().toISOString(), source: '/test', ...fields };
    log.push(event);
    for (const s of [...streams]) s.offer(event);
    return event;
  }
  async function fetch(url, init = {}) {
    const u = new URL(url, 'http://studio.test');
    const headers = init.headers || {};
    const call = { path: u.pathname, after: u.searchParams.get('after'), lastEventId: headers['last-event-id'] };
    calls.push(call);
    if (u.pathname.endsWith('/events/stream')) {
      if (hooks.beforeStream) await hooks.beforeStream(call);
      const from = headers['last-event-id'] ?? u.searchParams.get('after') ?? '0';
      let position = from === 'end' ? log.length : Number(from);
      call.from = position;
      let stream;
      const body = new ReadableStream({
        start(controller) {
          stream = {
            offer(event) {
              if (event.seq <= position) return;
              position = event.seq;
              controller.enqueue(enc.encode(`id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`));
            },
            drop() {
              streams.delete(stream);
              controller.error(new TypeError('the connection dropped'));
            },
          };
          streams.add(stream);
          for (const e of log) stream.offer(e);
        },
        cancel() {
          streams.delete(stream);
        },
      });
      if (init.signal) init.signal.addEventListener('abort', () => streams.delete(stream), { once: true });
      return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    }
    if (u.pathname.endsWith('/events')) {
      const after = Number(u.searchParams.get('after') || 0);
      const limit = Number(u.searchParams.get('limit') || 100);
      const events = log.filter((e) => e.seq > after).slice(0, limit);
      return Response.json({ events, next: events.length === limit ? String(events[events.length - 1].seq) : null });
    }
    if (u.pathname.endsWith('/runs')) {
      if (hooks.beforeList) await hooks.beforeList();
      const runs = log.filter((e) => e.type === 'run_started').map((e) => ({ run_id: e.run_id })).reverse();
      if (hooks.afterList) hooks.afterList();
      return Response.json({ runs, next: null });
    }
    return new Response('{}', { status: 404 });
  }
  return {
    log, calls, hooks, append, fetch,
    dropAll() { for (const s of [...streams]) s.drop(); },
    get openStreams() { return streams.size; },
  };
}

const tick = (ms = 5) => new Promise((r) => setTimeout(r, ms));
async function until(what, fn, ms = 2000) {
  const start = Date.now();
  while (!fn()) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`);
    await tick();
  }
}

/** The log's end as the Studio reads it: probes of the listing. */
function endOf(server) {
  return (from, signal) => findHead(async (after) => (await server.fetch(`/events?after=${after}&limit=50`, { signal })).json(), { from, parallel: 4 });
}

function open(server, options) {
  const seen = [];
  const stop = followLog({
    after: 'end',
    end: endOf(server),
    url: (after) => `/events/stream?after=${after}`,
    fetch: server.fetch,
    sleep: (ms, signal) => new Promise((r) => { const t = setTimeout(r, 5); signal?.addEventListener('abort', () => { clearTimeout(t); r(); }, { once: true }); }),
    onEvent: (e) => seen.push(e.seq),
    ...options,
  });
  return { seen, stop };
}

test('a stream opened at the end that drops before its first message resumes from the seq it opened at', async () => {
  const server = fakeServer();
  for (let i = 0; i < 5; i++) server.append({ type: 'ping' });
  let position = null;
  const { seen, stop } = open(server, { onPosition: (p) => { position = p; } });
  await until('the stream', () => server.openStreams === 1);
  assert.equal(position, 5);
  // Opened from the seq read before, not from `after=end` (which it could not come back to).
  const first = server.calls.find((c) => c.path.endsWith('/stream'));
  assert.equal(first.after, '5');
  // The connection drops before any message; two events are recorded while it is down.
  server.hooks.beforeStream = async () => {
    server.hooks.beforeStream = null;
    server.append({ type: 'ping' });
    server.append({ type: 'ping' });
  };
  server.dropAll();
  await until('events 6 and 7', () => seen.length === 2);
  assert.deepEqual(seen, [6, 7]);
  const streams = server.calls.filter((c) => c.path.endsWith('/stream'));
  assert.equal(streams.length, 2);
  assert.notEqual(streams[1].after, 'end');
  assert.equal(streams[1].from, 5);
  stop();
});

test('a reconnect sends the id of the last event seen, and misses nothing recorded while down', async () => {
  const server = fakeServer();
  server.append({ type: 'ping' });
  const { seen, stop } = open(server);
  await until('the stream', () => server.openStreams === 1);
  server.append({ type: 'ping' });
  server.append({ type: 'ping' });
  await until('2 and 3', () => seen.length === 2);
  server.hooks.beforeStream = async () => {
    server.hooks.beforeStream = null;
    server.append({ type: 'ping' });
  };
  server.dropAll();
  await until('4', () => seen.length === 3);
  server.append({ type: 'ping' });
  await until('5', () => seen.length === 4);
  assert.deepEqual(seen, [2, 3, 4, 5]);
  const streams = server.calls.filter((c) => c.path.endsWith('/stream'));
  assert.equal(streams[1].lastEventId, '3');
  assert.equal(streams[1].from, 3);
  stop();
});

test('a follower opened after a seq streams from it, and the server\'s error message is not an event', async () => {
  const server = fakeServer();
  for (let i = 0; i < 3; i++) server.append({ type: 'ping' });
  const seen = [];
  const stop = followLog({
    after: 1,
    url: (after) => `/events/stream?after=${after}`,
    fetch: server.fetch,
    sleep: async () => {},
    onEvent: (e) => seen.push(e.seq),
  });
  await until('2 and 3', () => seen.length === 2);
  assert.deepEqual(seen, [2, 3]);
  assert.equal(server.calls.filter((c) => c.path.endsWith('/events')).length, 0, 'no probe when the seq is known');
  stop();
});

/** A page of the Studio: a runs list kept from the log through the shared follower. */
function runsList(follower, server) {
  const runs = new Set();
  let lists = 0;
  const kept = keepListed({
    subscribe: (l) => follower.subscribe(l),
    list: async (signal) => (await server.fetch('/runs', { signal })).json(),
    onList: (page) => { lists++; for (const r of page.runs) runs.add(r.run_id); },
    apply: (events) => { for (const e of events) if (e.type === 'run_started') runs.add(e.run_id); },
  });
  return { runs, kept, get lists() { return lists; } };
}

function sharedOn(server) {
  return createSharedFollower({
    idleMs: 10,
    open: (from, h) => followLog({
      after: from.after,
      hint: from.hint,
      end: endOf(server),
      url: (after) => `/events/stream?after=${after}`,
      fetch: server.fetch,
      sleep: (ms, signal) => new Promise((r) => { const t = setTimeout(r, 5); signal?.addEventListener('abort', () => { clearTimeout(t); r(); }, { once: true }); }),
      onPosition: h.onPosition,
      onEvent: h.onEvent,
      onTrouble: h.onTrouble,
      onStop: h.onStop,
    }),
  });
}

test('no run started between the listing and the stream is lost', async () => {
  const server = fakeServer();
  for (let i = 1; i <= 120; i++) server.append({ type: i % 3 ? 'step_started' : 'run_started', run_id: `r${i}` });
  // Runs start while the page reads the end, lists, and before its stream is open.
  let beforeListing = 0;
  server.hooks.beforeList = async () => {
    server.hooks.beforeList = null;
    beforeListing = server.log.length;
    server.append({ type: 'run_started', run_id: 'during-listing' });
  };
  // And one after the listing was made, before the stream opens: the gap of listing first and
  // then streaming from `after=end`.
  let listed;
  const listing = new Promise((resolve) => { listed = resolve; });
  server.hooks.afterList = () => {
    server.hooks.afterList = null;
    listed();
  };
  server.hooks.beforeStream = async () => {
    server.hooks.beforeStream = null;
    await listing;
    server.append({ type: 'run_started', run_id: 'before-stream' });
  };
  const follower = sharedOn(server);
  const page = runsList(follower, server);
  await until('the stream', () => server.openStreams === 1);
  server.append({ type: 'run_started', run_id: 'after-stream' });
  await until('every run', () => page.runs.has('after-stream') && page.runs.has('before-stream'));
  const expected = server.log.filter((e) => e.type === 'run_started').map((e) => e.run_id);
  assert.deepEqual([...page.runs].sort(), expected.sort());
  assert.ok(beforeListing >= 120, 'the end was read before the listing');
  assert.equal(page.lists, 1);
  page.kept.stop();
});

test('a second page on a running follower lists from where the follower is, and a new key resumes it', async () => {
  const server = fakeServer();
  server.append({ type: 'run_started', run_id: 'a' });
  const follower = sharedOn(server);
  const first = runsList(follower, server);
  await until('the stream', () => server.openStreams === 1);
  server.append({ type: 'run_started', run_id: 'b' });
  await until('b', () => first.runs.has('b'));
  server.hooks.beforeList = async () => {
    server.hooks.beforeList = null;
    // Recorded after the follower's place was taken, before this listing: in the listing.
    server.append({ type: 'run_started', run_id: 'c' });
  };
  const second = runsList(follower, server);
  await until('c in both', () => second.runs.has('c') && first.runs.has('c'));
  assert.deepEqual([...second.runs].sort(), ['a', 'b', 'c']);
  const probes = server.calls.filter((c) => c.path.endsWith('/events')).length;
  // A new key: the follower connects again from the last seq it delivered.
  server.hooks.beforeStream = async () => {
    server.hooks.beforeStream = null;
    server.append({ type: 'run_started', run_id: 'd' });
  };
  follower.restart();
  await until('d in both', () => first.runs.has('d') && second.runs.has('d'));
  const streams = server.calls.filter((c) => c.path.endsWith('/stream'));
  assert.equal(streams[streams.length - 1].after, '3');
  assert.equal(server.calls.filter((c) => c.path.endsWith('/events')).length, probes, 'no new search for the end');
  first.kept.stop();
  second.kept.stop();
});

test('when the end cannot be read, the list is drawn anyway and drawn again once the follower has its place', async () => {
  const server = fakeServer();
  server.append({ type: 'run_started', run_id: 'a' });
  let failures = 2;
  const flaky = {
    ...server,
    fetch: async (url, init) => {
      if (String(url).startsWith('/events?') && failures > 0) {
        failures--;
        throw Object.assign(new Error('the server cannot be reached'), { status: 0 });
      }
      return server.fetch(url, init);
    },
  };
  const follower = sharedOn(flaky);
  const page = runsList(follower, flaky);
  await until('the first listing', () => page.lists === 1);
  server.append({ type: 'run_started', run_id: 'b' });
  await until('the stream', () => server.openStreams === 1);
  await until('the listing again', () => page.lists === 2);
  server.append({ type: 'run_started', run_id: 'c' });
  await until('c', () => page.runs.has('c'));
  assert.deepEqual([...page.runs].sort(), ['a', 'b', 'c']);
  page.kept.stop();
});

test('a refused stream stops the follower, and a new subscription starts it again', async () => {
  const server = fakeServer();
  let refuse = true;
  const fatal = [];
  const follower = createSharedFollower({
    idleMs: 10,
    open: (from, h) => followLog({
      after: from.after,
      end: async () => 0,
      url: (after) => `/events/stream?after=${after}`,
      fetch: async (url, init) => (refuse ? new Response('{"kind":"unauthenticated"}', { status: 403 }) : server.fetch(url, init)),
      sleep: async () => {},
      onFatal: (status) => fatal.push(status),
      onPosition: h.onPosition,
      onEvent: h.onEvent,
      onStop: h.onStop,
    }),
  });
  const seen = [];
  const unsubscribe = follower.subscribe({ onEvent: (e) => seen.push(e.seq) });
  assert.equal(await unsubscribe.ready, 0);
  await until('the refusal', () => fatal.length === 1 && !follower.running);
  refuse = false;
  follower.restart();
  await until('the stream', () => server.openStreams === 1);
  server.append({ type: 'ping' });
  await until('1', () => seen.length === 1);
  unsubscribe();
  await until('the idle stop', () => !follower.running);
});
