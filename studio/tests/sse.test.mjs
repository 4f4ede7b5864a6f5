import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSseParser, followStream } from '../src/lib/sse.js';
import { findHead } from '../src/lib/head.js';

function parseAll(chunks) {
  const out = [];
  const comments = [];
  const p = createSseParser((m) => out.push(m), (c) => comments.push(c));
  for (const c of chunks) p.push(c);
  p.end();
  return { out, comments, last: p.lastEventId };
}

test('a message with id, event and data, as the server sends it', () => {
  const { out, last } = parseAll(['id: 6\nevent: run_started\ndata: {"seq":6}\n\n']);
  assert.deepEqual(out, [{ id: '6', event: 'run_started', data: '{"seq":6}', retry: undefined }]);
  assert.equal(last, '6');
});

test('chunks split anywhere, even inside a field name or a CRLF', () => {
  const text = 'id: 1\r\nevent: a\r\ndata: x\r\n\r\nid: 2\r\ndata: y\r\n\r\n';
  for (let cut = 0; cut <= text.length; cut++) {
    const { out } = parseAll([text.slice(0, cut), text.slice(cut)]);
    assert.deepEqual(out.map((m) => [m.id, m.event, m.data]), [['1', 'a', 'x'], ['2', 'message', 'y']], `cut at ${cut}`);
  }
  const { out } = parseAll([...text]);
  assert.equal(out.length, 2);
});

test('comments (keep-alive) are not messages', () => {
  const { out, comments } = parseAll([': keep-alive\n\n', 'data: a\n\n', ':x\n']);
  assert.deepEqual(out.map((m) => m.data), ['a']);
  assert.deepEqual(comments, ['keep-alive', 'x']);
});

test('multi-line data joins with newlines; the first space after the colon is dropped only once', () => {
  const { out } = parseAll(['data:one\ndata:  two\ndata\n\n']);
  assert.equal(out[0].data, 'one\n two\n');
});

test('an unterminated message at the end is dropped; a bare CR ends lines', () => {
  const { out } = parseAll(['data: a\r\rdata: b']);
  assert.deepEqual(out.map((m) => m.data), ['a']);
});

test('the id stays for later messages without one; retry is read; a BOM is skipped', () => {
  const { out } = parseAll(['\ufeffid: 9\ndata: a\n\nretry: 300\ndata: b\n\n']);
  assert.deepEqual(out.map((m) => [m.id, m.data, m.retry]), [['9', 'a', undefined], ['9', 'b', 300]]);
});

test('an event with no data is not dispatched', () => {
  const { out } = parseAll(['event: x\n\nid: 3\n\n']);
  assert.equal(out.length, 0);
});

function streamResponse(parts, { status = 200 } = {}) {
  const enc = new TextEncoder();
  return new Response(new ReadableStream({
    start(c) { for (const p of parts) c.enqueue(enc.encode(p)); c.close(); },
  }), { status, headers: { 'content-type': 'text/event-stream' } });
}

test('followStream reconnects after a drop with Last-Event-ID and keeps the headers', async () => {
  const calls = [];
  const seen = [];
  const controller = new AbortController();
  const responses = [
    () => streamResponse(['id: 1\ndata: a\n\n', 'id: 2\ndata: b\n\n']),
    () => { throw new TypeError('network down'); },
    () => streamResponse(['id: 3\ndata: c\n\n']),
    () => new Response('{"reason":"forbidden"}', { status: 401 }),
  ];
  let fatal = null;
  const errors = [];
  await followStream({
    url: 'http://x/stream?after=0',
    headers: { authorization: 'Bearer k' },
    fetch: async (url, init) => { calls.push({ url, headers: { ...init.headers } }); return responses[calls.length - 1](); },
    onMessage: (m) => seen.push(m.data),
    onError: (e) => errors.push(String(e)),
    onFatal: (status) => { fatal = status; },
    sleep: async () => {},
    signal: controller.signal,
  });
  assert.deepEqual(seen, ['a', 'b', 'c']);
  assert.equal(calls[0].headers['last-event-id'], undefined);
  assert.equal(calls[1].headers['last-event-id'], '2');
  assert.equal(calls[2].headers['last-event-id'], '2');
  assert.equal(calls[3].headers['last-event-id'], '3');
  assert.ok(calls.every((c) => c.headers.authorization === 'Bearer k'));
  assert.equal(fatal, 401);
  assert.equal(errors.length, 1);
});

test('followStream stops when aborted', async () => {
  const controller = new AbortController();
  let n = 0;
  await followStream({
    url: 'http://x',
    fetch: async () => { n++; if (n === 2) controller.abort(); return streamResponse(['data: a\n\n']); },
    onMessage: () => {},
    sleep: async () => {},
    signal: controller.signal,
  });
  assert.equal(n, 2);
});

test('findHead finds the newest seq in few probes', async () => {
  for (const head of [0, 1, 2, 1023, 1024, 1025, 5000, 123457, 4_000_000]) {
    let probes = 0;
    const got = await findHead(async (after) => { probes++; return after < head; });
    assert.equal(got, head, `head ${head}`);
    assert.ok(probes <= 2 * Math.log2(Math.max(head, 1024)) + 4, `${probes} probes for ${head}`);
  }
});

test('findHead with pages of the listing: a page that is not full ends the search', async () => {
  for (const head of [0, 1, 49, 50, 51, 1023, 1024, 5000, 123457, 4_000_000]) {
    for (const parallel of [1, 4]) {
      let probes = 0;
      let rounds = 0;
      let inRound = 0;
      const got = await findHead(async (after) => {
        probes++;
        if (inRound++ === 0) rounds++;
        await Promise.resolve();
        inRound = 0;
        const events = [];
        for (let s = after + 1; s <= head && events.length < 50; s++) events.push({ seq: s });
        return { events, next: events.length === 50 ? String(events[49].seq) : null };
      }, { parallel });
      assert.equal(got, head, `head ${head}, ${parallel} at once`);
      assert.ok(probes <= 2 * Math.log2(Math.max(head, 1024)) + 4 * parallel, `${probes} probes for ${head}`);
    }
  }
});

test('findHead starts from a seq known to be recorded, and the log may grow while it searches', async () => {
  let head = 3000;
  const asked = [];
  const got = await findHead(async (after) => {
    asked.push(after);
    head += 1; // an event is recorded with each probe
    return after < head;
  }, { from: 2990 });
  assert.equal(asked[0], 2990);
  assert.ok(got >= 3000 && got <= head, `${got} within 3000..${head}`);
  assert.ok(asked.length < 20, `${asked.length} probes`);
});
