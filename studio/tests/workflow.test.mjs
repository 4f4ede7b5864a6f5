import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stepTree, nodeForReference, taskStates, nodeStates, mermaidBlock, referencePath } from '../src/lib/workflow.js';
import { detectShape, seriesColumns } from '../src/lib/shapes.js';

// The flowchart the runtime generates for the workflow format page's review-and-approve.
const chart = `flowchart TD
  start([run_definition])
  finish([end])
  subgraph s1["1. review: tries"]
    s2["2. review-brief: Run review-campaign-brief"]
    s3(["3. give-up: raises an error"])
  end
  subgraph s4["4. approval: tries"]
    s5["5. ask-for-approval: Run approve-campaign-brief"]
    s6["6. no-answer: sets its output"]
  end
  s7{"7. judge #quot;x#quot;"}
  start --> s1
  s2 -.->|caught| s3
`;

test('the generated flowchart reads as a tree of steps', () => {
  const tree = stepTree(chart);
  assert.deepEqual(tree.map((n) => [n.id, n.name, n.children.map((c) => c.id)]), [
    ['s1', 'review', ['s2', 's3']],
    ['s4', 'approval', ['s5', 's6']],
    ['s7', 'judge "x"', []],
  ]);
  assert.equal(mermaidBlock('x\n```mermaid\nflowchart TD\n  a\n```\n'), 'flowchart TD\n  a\n');
});

test('references map to nodes, through try and catch', () => {
  const tree = stepTree(chart);
  assert.equal(nodeForReference(tree, '/do/0/review'), 's1');
  assert.equal(nodeForReference(tree, '/do/0/review/try/0/review-brief'), 's2');
  assert.equal(nodeForReference(tree, '/do/0/review/catch/do/0/give-up'), 's3');
  assert.equal(nodeForReference(tree, '/do/1/approval/try/0/ask-for-approval'), 's5');
  assert.equal(nodeForReference(tree, '/do/9/nope'), null);
  assert.deepEqual(referencePath('/do/1/loop/for/do/0/x').map((s) => s.name), ['loop', 'x']);
});

const ev = (type, reference) => ({ type, data: { reference } });

test('task states follow the events, and a run that ended leaves the rest skipped', () => {
  const events = [
    ev('step_started', '/do/0/review'),
    ev('step_started', '/do/0/review/try/0/review-brief'),
    ev('call_started', '/do/0/review/try/0/review-brief'),
    ev('call_ended', '/do/0/review/try/0/review-brief'),
    ev('step_completed', '/do/0/review/try/0/review-brief'),
    ev('step_completed', '/do/0/review'),
    ev('step_started', '/do/1/approval'),
    ev('step_started', '/do/1/approval/try/0/ask-for-approval'),
    ev('call_started', '/do/1/approval/try/0/ask-for-approval'),
  ];
  const tree = stepTree(chart);
  let nodes = nodeStates(tree, taskStates(events, 'started'), 'started');
  assert.deepEqual(Object.fromEntries(nodes), { s1: 'done', s2: 'done', s3: 'pending', s4: 'waiting', s5: 'waiting', s6: 'pending', s7: 'pending' });
  events.push(ev('call_ended', '/do/1/approval/try/0/ask-for-approval'), ev('step_completed', '/do/1/approval/try/0/ask-for-approval'), ev('step_completed', '/do/1/approval'));
  nodes = nodeStates(tree, taskStates(events, 'succeeded'), 'succeeded');
  assert.deepEqual(Object.fromEntries(nodes), { s1: 'done', s2: 'done', s3: 'skipped', s4: 'done', s5: 'done', s6: 'skipped', s7: 'skipped' });
  const failed = nodeStates(tree, taskStates([ev('step_started', '/do/0/review'), ev('step_failed', '/do/0/review')], 'rejected'), 'rejected');
  assert.equal(failed.get('s1'), 'failed');
  assert.equal(failed.get('s4'), 'skipped');
});

test('output shapes are found from the value or the schema', () => {
  assert.equal(detectShape({ lines: [{ name: 'a', points: [{ x: 1, y: 2 }] }] }), 'series');
  assert.equal(detectShape({ categories: [{ name: 'a', value: 1 }] }), 'categories');
  assert.equal(detectShape({ columns: [{ name: 'a' }], rows: [[1]] }), 'table');
  assert.equal(detectShape({ title: 't', text: '# hi' }), 'text');
  assert.equal(detectShape({ text: 'hi', other: 1 }), null);
  assert.equal(detectShape('plain'), null);
  const cols = seriesColumns({ lines: [{ name: 'a', points: [{ x: '2026-01-01', y: 1 }, { x: '2026-02-01', y: 2 }] }, { name: 'b', points: [{ x: '2026-02-01', y: 5 }] }] });
  assert.equal(cols.time, true);
  assert.equal(cols.xs.length, 2);
  assert.deepEqual(cols.ys, [[1, 2], [null, 5]]);
});
