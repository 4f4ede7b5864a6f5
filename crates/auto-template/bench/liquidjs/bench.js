// Times LiquidJS on the templates benches/render.rs times, for a side-by-side figure.
// Usage: cd bench/liquidjs && npm install liquidjs && node bench.js
// (node_modules is not committed.)
const { Liquid } = require('liquidjs');
const fs = require('fs');
const path = require('path');

const PROMPT = fs.readFileSync(path.join(__dirname, 'prompt.liquid'), 'utf8');
const criteria = Array.from({ length: 12 }, (_, i) => ({
  name: `criterion ${i}`,
  description: '  Is the claim supported by evidence that a reader can check?  ',
}));
const promptData = {
  input: {
    company: 'Acme',
    brief: 'Launch the spring campaign for the new kettle in three markets. '.repeat(20),
    criteria,
    attachments: [{ title: 'Plan' }, { title: 'Budget' }, { title: 'Research' }],
    context: { market: ['FR', 'DE', 'ES'], budget: 125000.5, owner: { name: 'Ada', team: 'Growth' } },
  },
  today: '2026-04-01',
  now: '2026-04-01T09:30:00Z',
};

// `{% system %}` is ours; LiquidJS gets an equivalent block tag that renders its body.
function engine() {
  const liquid = new Liquid();
  liquid.registerTag('system', {
    parse(token, remain) {
      this.tpls = [];
      const stream = this.liquid.parser.parseStream(remain)
        .on('tag:endsystem', () => stream.stop())
        .on('template', (tpl) => this.tpls.push(tpl));
      stream.start();
    },
    * render(ctx, emitter) { yield this.liquid.renderer.renderTemplates(this.tpls, ctx, emitter); },
  });
  return liquid;
}

function time(label, iterations, fn) {
  for (let i = 0; i < Math.min(iterations, 200); i++) fn();
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) fn();
  const ns = Number(process.hrtime.bigint() - start) / iterations;
  console.log(`${label.padEnd(20)} ${(ns / 1000).toFixed(1)} µs`);
}

const liquid = engine();
time('prompt/parse', 5000, () => liquid.parse(PROMPT));
const prompt = liquid.parse(PROMPT);
time('prompt/render', 5000, () => liquid.renderSync(prompt, promptData));

const fixture = path.join(__dirname, '../../tests/golden/benchmark');
if (fs.existsSync(path.join(fixture, 'index.liquid'))) {
  const source = fs.readFileSync(path.join(fixture, 'index.liquid'), 'utf8');
  const data = JSON.parse(fs.readFileSync(path.join(fixture, 'data.json'), 'utf8'));
  time('golden-002/parse', 2000, () => liquid.parse(source));
  const template = liquid.parse(source);
  time('golden-002/render', 2000, () => liquid.renderSync(template, data));
} else {
  console.log('golden-liquid benchmark fixture missing; run scripts/fetch-golden-liquid.sh');
}
