import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readRunFilters, runQuery, runMatches, eventVerdict, mergeRuns, toLocalInput, fromLocalInput } from '../src/lib/runs.js';

const NOW = Date.parse('2026-03-10T12:00:00Z');

test('the filters come from the address, and every one goes to list_runs', () => {
  const f = readRunFilters(new URLSearchParams('type=workflow&name=review&status=rejected&reason=conflict&since=2026-03-01T00:00:00Z&until=2026-03-02T00:00:00Z'));
  assert.deepEqual(f, { type: 'workflow', name: 'review', status: 'rejected', reason: 'conflict', since: '2026-03-01T00:00:00Z', until: '2026-03-02T00:00:00Z' });
  assert.deepEqual(runQuery(f, NOW), { ...f });
  assert.deepEqual(runQuery(readRunFilters(new URLSearchParams('')), NOW), {});
});

test('a time preset stays a preset in the address and becomes a time in the query', () => {
  const q = runQuery(readRunFilters(new URLSearchParams('since=24h&status=failed')), NOW);
  assert.deepEqual(q, { status: 'failed', since: '2026-03-09T12:00:00.000Z' });
});

const run = (over) => ({ run_id: 'r1', type: 'computation', name: 'double', status: 'succeeded', problem: null, started_at: '2026-03-10T11:00:00Z', ...over });

test('a run matches as the server would list it: since inclusive, until exclusive', () => {
  assert.ok(runMatches(run(), {}));
  assert.ok(runMatches(run(), { type: 'computation', name: 'double', status: 'succeeded' }));
  assert.ok(!runMatches(run(), { type: 'workflow' }));
  assert.ok(!runMatches(run(), { status: 'started' }));
  assert.ok(!runMatches(run(), { reason: 'conflict' }));
  assert.ok(runMatches(run({ status: 'rejected', problem: { reason: 'conflict' } }), { reason: 'conflict' }));
  assert.ok(runMatches(run(), { since: '2026-03-10T11:00:00Z' }));
  assert.ok(!runMatches(run(), { until: '2026-03-10T11:00:00Z' }));
  assert.ok(runMatches(run(), { since: '2026-03-10T10:00:00Z', until: '2026-03-10T11:00:01Z' }));
  assert.ok(!runMatches(run(), { since: '2026-03-10T11:00:01Z' }));
});

const fact = (type, over = {}) => ({ type, run_id: 'r1', subject: 'computation/double', ...over });

test('events: another definition\'s runs are ignored, a status that leaves the filter removes, the rest are read', () => {
  assert.equal(eventVerdict(fact('step_started'), {}), 'ignore');
  assert.equal(eventVerdict(fact('run_started', { run_id: undefined }), {}), 'ignore');
  assert.equal(eventVerdict(fact('run_started'), {}), 'check');
  assert.equal(eventVerdict(fact('run_started'), { type: 'workflow' }), 'ignore');
  assert.equal(eventVerdict(fact('run_started'), { name: 'other' }), 'ignore');
  assert.equal(eventVerdict(fact('run_started'), { status: 'started' }), 'check');
  assert.equal(eventVerdict(fact('run_succeeded'), { status: 'started' }), 'remove');
  assert.equal(eventVerdict(fact('run_rejected', { data: { reason: 'cancelled' } }), { status: 'rejected', reason: 'conflict' }), 'remove');
  assert.equal(eventVerdict(fact('run_rejected', { data: { reason: 'conflict' } }), { reason: 'conflict' }), 'check');
  assert.equal(eventVerdict(fact('run_succeeded'), { reason: 'conflict' }), 'remove');
  assert.equal(eventVerdict(fact('run_started'), { since: '2026-03-10T00:00:00Z' }), 'check');
});

test('merging keeps the server\'s order (newest first, then run_id) and drops what left', () => {
  const a = run({ run_id: 'a', started_at: '2026-03-10T10:00:00Z' });
  const b = run({ run_id: 'b', started_at: '2026-03-10T11:00:00Z' });
  const c = run({ run_id: 'c', started_at: '2026-03-10T11:00:00Z' });
  const list = mergeRuns([b, a], [c, { ...a, status: 'failed' }]);
  assert.deepEqual(list.map((r) => r.run_id), ['c', 'b', 'a']);
  assert.equal(list[2].status, 'failed');
  assert.deepEqual(mergeRuns(list, [], ['b']).map((r) => r.run_id), ['c', 'a']);
});

test('datetime-local values go to RFC 3339 and back', () => {
  const iso = fromLocalInput('2026-03-10T09:30');
  assert.match(iso, /^2026-03-\d\dT\d\d:30:00Z$/);
  assert.equal(toLocalInput(iso), '2026-03-10T09:30');
  assert.equal(fromLocalInput(''), '');
  assert.equal(toLocalInput('nope'), '');
});
