// Runs golden-liquid (tests/golden/golden_liquid.json) through LiquidJS with its default
// options, to tell which cases LiquidJS itself passes (tests/golden_known_failures.txt marks
// them). Usage: cd bench/liquidjs && npm install liquidjs && node golden.js [NAME...]
// Prints one line a failing case, then the count; with names, prints what each renders.
const { Liquid } = require('liquidjs');
const fs = require('fs');
const path = require('path');

const suite = JSON.parse(fs.readFileSync(path.join(__dirname, '../../tests/golden/golden_liquid.json'), 'utf8'));
const only = process.argv.slice(2);
let passed = 0;
let total = 0;
for (const c of suite.tests) {
  if (only.length && !only.includes(c.name)) continue;
  total++;
  const liquid = new Liquid({ templates: c.templates || {} });
  const expected = c.result !== undefined ? [c.result] : (c.results || []);
  let out;
  let error;
  try {
    out = liquid.parseAndRenderSync(c.template, c.data || {});
  } catch (e) {
    error = e;
  }
  const ok = c.invalid ? error !== undefined : error === undefined && expected.includes(out);
  if (ok) passed++;
  if (only.length) {
    console.log(`${ok ? 'PASS' : 'FAIL'} ${c.name}: ${error ? `error ${error.message}` : JSON.stringify(out)}, expected ${c.invalid ? 'an error' : JSON.stringify(expected)}`);
  } else if (!ok) {
    console.log(`FAIL ${c.name}`);
  }
}
console.log(`LiquidJS ${require('liquidjs/package.json').version}: ${passed} passed / ${total}`);
