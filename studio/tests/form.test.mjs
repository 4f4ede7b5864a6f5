import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describe, initialValue, setAt, getAt, parseInput, placeIssues, missingRequired } from '../src/lib/schemaForm.js';

const answerSchema = {
  type: 'object',
  required: ['verdict'],
  properties: {
    verdict: { type: 'string', enum: ['approve', 'revise'] },
    note: { type: 'string', maxLength: 2000 },
  },
};

test('an interaction output schema becomes an enum and a long text', () => {
  const f = describe(answerSchema);
  assert.equal(f.kind, 'object');
  assert.deepEqual(f.children.map((c) => [c.pointer, c.kind, c.required]), [['/verdict', 'enum', true], ['/note', 'text', false]]);
  assert.deepEqual(f.children[0].options, ['approve', 'revise']);
});

test('kinds: numbers, booleans, dates, arrays, nested objects, nullable and unknown', () => {
  const f = describe({
    type: 'object',
    properties: {
      amount: { type: 'number', minimum: 0 },
      count: { type: 'integer' },
      ok: { type: 'boolean' },
      day: { type: 'string', format: 'date' },
      tags: { type: 'array', items: { type: 'string' } },
      owner: { type: 'object', required: ['email'], properties: { email: { type: 'string' } } },
      maybe: { type: ['string', 'null'] },
      any: {},
      'a/b': { type: 'string' },
    },
  });
  const kinds = Object.fromEntries(f.children.map((c) => [c.key, c.kind]));
  assert.deepEqual(kinds, { amount: 'number', count: 'integer', ok: 'boolean', day: 'string', tags: 'array', owner: 'object', maybe: 'string', any: 'json', 'a/b': 'string' });
  assert.equal(f.children.find((c) => c.key === 'day').format, 'date');
  assert.equal(f.children.find((c) => c.key === 'a/b').pointer, '/a~1b');
  assert.equal(f.children.find((c) => c.key === 'owner').children[0].pointer, '/owner/email');
  assert.equal(f.children.find((c) => c.key === 'maybe').nullable, true);
});

test('initial values take defaults and make nested objects', () => {
  const f = describe({ type: 'object', properties: { criteria: { type: 'string', default: 'x' }, o: { type: 'object', properties: { n: { type: 'number', default: 2 } } } } });
  assert.deepEqual(initialValue(f), { criteria: 'x', o: { n: 2 } });
  assert.deepEqual(initialValue(describe(undefined)), undefined);
});

test('setAt and getAt build values by pointer, and undefined removes', () => {
  let v = {};
  v = setAt(v, '/a/b', 1);
  v = setAt(v, '/list/0', 'x');
  v = setAt(v, '/list/-', 'y');
  assert.deepEqual(v, { a: { b: 1 }, list: ['x', 'y'] });
  assert.equal(getAt(v, '/list/1'), 'y');
  v = setAt(v, '/list/0', undefined);
  v = setAt(v, '/a/b', undefined);
  assert.deepEqual(v, { a: {}, list: ['y'] });
  assert.equal(getAt(v, '/nope/x'), undefined);
});

test('parseInput keeps what does not parse, for the server to name', () => {
  const n = describe({ type: 'number' });
  assert.equal(parseInput(n, '12.5'), 12.5);
  assert.equal(parseInput(n, 'abc'), 'abc');
  assert.equal(parseInput(n, ''), undefined);
  const e = describe({ enum: [1, 2] });
  assert.equal(parseInput(e, '2'), 2);
  const s = describe({ type: 'string' });
  assert.equal(parseInput(s, ''), undefined);
});

test('issues of a 422 problem land beside their fields, the rest above the form', () => {
  const f = describe(answerSchema);
  const { byPointer, unplaced } = placeIssues([
    { pointer: '/answer/verdict', message: 'verdict: is required' },
    { pointer: '/answer/note', message: 'note: expected a string, found a number' },
    { pointer: '/answer/note/deep', message: 'deep' },
    { pointer: '/answer', message: 'whole' },
    { pointer: '/other', message: 'elsewhere' },
  ], '/answer', f);
  assert.deepEqual(byPointer.get('/verdict'), ['verdict: is required']);
  assert.deepEqual(byPointer.get('/note'), ['note: expected a string, found a number', 'deep']);
  assert.deepEqual(unplaced, ['whole', 'elsewhere']);
});

test('missingRequired names empty required fields', () => {
  const f = describe(answerSchema);
  assert.deepEqual(missingRequired(f, {}), [{ pointer: '/verdict', message: 'Verdict is required.' }]);
  assert.deepEqual(missingRequired(f, { verdict: 'approve' }), []);
});
