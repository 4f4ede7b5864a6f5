#!/usr/bin/env node
// The Studio against a server with keys, in headless Chromium: it starts `auto serve` with
// [[keys]] for an admin, a runner and a viewer of the org acme (keys made by `auto key new`),
// seeds the playbook acme/main as the admin, and then, as a person would:
//
// - without a key, meets the key prompt (the server answers 401, reason forbidden, kind
//   unauthenticated); a wrong key is refused with a clear message and not kept;
// - with the viewer's key, reads every page but is offered no edit, save, retire, run, cancel
//   or answer, and an edit, new-definition or start-run address opened directly says that the
//   role cannot do it (without loading the editor); no request is refused meanwhile, and every
//   request, the event stream's too, carries the key;
// - with the runner's key, may run and answer but not edit;
// - with the admin's key, starts a run from its form and sees it end and join the runs list,
//   and cancels a waiting run; the key survives a reload, and a key the server no longer takes
//   brings the prompt back.
//
//   node tests/auth.mjs --auto PATH [--shots DIR] [--chromium /usr/bin/chromium]
//
// The Studio is this build's dist/: when the binary embeds another, tests/serve.mjs serves
// dist/ in front of it (STUDIO_PROXY=1 forces that). Exits non-zero on any failure.
import { chromium } from 'playwright-core';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtemp, readFile, writeFile, mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
const studioDir = resolve(here, '..');

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}

const AUTO = resolve(arg('auto', process.env.AUTO_BIN || ''));
const CHROMIUM = arg('chromium', process.env.CHROMIUM || '/usr/bin/chromium');
const ORG = 'acme';
const PB = 'main';

const results = [];
const measured = {};
const children = [];
let work;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

async function waitFor(url, what) {
  for (let i = 0; i < 150; i++) {
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {
      /* not yet */
    }
    await sleep(200);
  }
  throw new Error(`${what} did not answer at ${url}`);
}

function newKey() {
  const out = execFileSync(AUTO, ['key', 'new'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const key = /^key:\s*(\S+)/m.exec(out)?.[1];
  const hash = /^hash:\s*(\S+)/m.exec(out)?.[1];
  if (!key || !hash) throw new Error(`auto key new printed ${JSON.stringify(out)}`);
  return { key, hash };
}

/** `auto serve` with the three keys, and the Studio of this build in front when needed. */
async function startServer() {
  work = await mkdtemp(join(tmpdir(), 'studio-auth-'));
  const keys = { admin: newKey(), runner: newKey(), viewer: newKey() };
  const callers = { admin: 'ada', runner: 'rui', viewer: 'vic' };
  const port = await freePort();
  const config = [`listen = "127.0.0.1:${port}"`, `database = "sqlite://${work}/auto.db"`, ''];
  for (const role of ['admin', 'runner', 'viewer']) {
    config.push('[[keys]]', `caller = "${callers[role]}"`, `org = "${ORG}"`, `role = "${role}"`, `hash = "${keys[role].hash}"`, '');
  }
  await writeFile(join(work, 'auto.toml'), config.join('\n'));
  const log = [];
  const server = spawn(AUTO, ['serve', '--config', join(work, 'auto.toml')], { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(server);
  server.stdout.on('data', (d) => log.push(String(d)));
  server.stderr.on('data', (d) => log.push(String(d)));
  const api = `http://127.0.0.1:${port}`;
  try {
    await waitFor(`${api}/healthz`, 'auto serve');
  } catch (e) {
    throw new Error(`${e.message}\n${log.join('')}`);
  }
  let base = api;
  const served = await (await fetch(`${api}/studio/`)).text();
  const built = await readFile(join(studioDir, 'dist', 'index.html'), 'utf8');
  if (process.env.STUDIO_PROXY === '1' || served !== built) {
    const proxyPort = await freePort();
    const proxy = spawn(process.execPath, [join(here, 'serve.mjs'), '--upstream', api, '--port', String(proxyPort)], { stdio: 'ignore' });
    children.push(proxy);
    base = `http://127.0.0.1:${proxyPort}`;
    await waitFor(`${base}/studio/`, 'tests/serve.mjs');
    console.log(`note: ${AUTO} does not serve this build of the Studio: tests/serve.mjs serves studio/dist in front of it`);
  }
  return { base, api, keys, callers, log };
}

// ---------------------------------------------------------------------------------------------

let S; // the server
const pbPath = (rest) => `/v1/orgs/${ORG}/playbooks/${PB}${rest}`;

async function call(key, method, path, body) {
  const headers = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (key) headers.authorization = `Bearer ${key}`;
  const response = await fetch(S.api + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch { json = text; }
  return { status: response.status, body: json };
}

async function must(key, method, path, body, ok = [200, 201, 202]) {
  const r = await call(key, method, path, body);
  if (!ok.includes(r.status)) throw new Error(`${method} ${path} answered ${r.status}: ${JSON.stringify(r.body).slice(0, 500)}`);
  return r.body;
}

const DOUBLE = `---
description: Doubles a number
input:
  schema:
    type: object
    required: [n]
    properties:
      n: { type: integer, default: 21 }
output:
  schema:
    type: object
    required: [double]
    properties:
      double: { type: integer }
---
Doubles its input.

\`\`\`ts
export default function (input: { n: number }) {
  return { double: input.n * 2 };
}
\`\`\`
`;

const APPROVE = `---
description: Asks for an approval
to: '{{ input.owner }}'
expires: P2D
input:
  schema:
    type: object
    required: [owner]
    properties:
      owner: { type: string }
output:
  schema:
    type: object
    required: [verdict]
    properties:
      verdict: { type: string, enum: [approve, revise] }
---
Please approve the **spring budget**, or ask for a revision.
`;

async function seed() {
  const admin = S.keys.admin.key;
  await must(admin, 'POST', '/v1/orgs', { id: ORG }, [201, 409]);
  await must(admin, 'POST', `/v1/orgs/${ORG}/playbooks`, { id: PB, title: 'Keyed Studio test' }, [201, 409]);
  await must(admin, 'POST', pbPath('/definitions'), { type: 'computation', name: 'double', source: DOUBLE, diagram: 'flowchart LR\n  n --> double' });
  await must(admin, 'POST', pbPath('/definitions'), { type: 'interaction', name: 'approve', source: APPROVE, diagram: 'none' });
  const done = await must(admin, 'POST', pbPath('/definitions/computation/double/runs'), { input: { n: 2 }, run_id: 'seeded-double' });
  const waiting = await must(admin, 'POST', pbPath('/definitions/interaction/approve/runs'), { input: { owner: 'dana@example.com' }, run_id: 'seeded-approval' });
  return { done: done.run_id, waiting: waiting.run_id };
}

// ---------------------------------------------------------------------------------------------
// The browser.

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'];
let browser;
let axeSource;
let shotIndex = 0;
let SHOTS;

async function step(name, fn) {
  const started = Date.now();
  try {
    await fn();
    results.push({ name, ok: true });
    console.log(`ok   ${name} (${Date.now() - started} ms)`);
  } catch (error) {
    results.push({ name, ok: false, error: String(error?.stack || error) });
    console.log(`FAIL ${name}: ${String(error?.message || error).split('\n').slice(0, 6).join('\n     ')}`);
  }
}

async function shot(page, name) {
  await page.screenshot({ path: join(SHOTS, `auth-${String(++shotIndex).padStart(2, '0')}-${name}.png`), fullPage: true });
}

const axeSeen = [];
async function axe(page, name) {
  if (!(await page.evaluate(() => !!window.axe))) await page.evaluate(axeSource);
  const found = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
  });
  const bad = found.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  axeSeen.push(`${name} ${found.length}/${bad.length}`);
  if (bad.length) throw new Error(`axe on ${name}: ${bad.map((v) => `${v.impact} ${v.id} (${v.help}) at ${v.nodes.join(', ')}`).join('; ')}`);
}

/**
 * A page that records what it asked of /v1 (with its Authorization) and what was answered, and
 * every script error. `expectRefusals` lets the no-key and wrong-key phases be answered 401.
 */
async function newPage() {
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
  const page = await context.newPage();
  page.errors = [];
  page.requests = [];
  page.answers = [];
  page.on('pageerror', (e) => page.errors.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/Failed to load resource: the server responded with a status of 40[13]/.test(m.text())) page.errors.push(`console error: ${m.text().slice(0, 300)}`);
  });
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.pathname.startsWith('/v1/') || u.pathname.includes('/assets/')) page.requests.push({ path: u.pathname + u.search, auth: r.headers()['authorization'] || '' });
  });
  // An answer is listed as it arrives, so that no check that follows misses it; a refusal's body
  // comes later (`ready`), and a check that reads it waits for it.
  page.on('response', (r) => {
    const u = new URL(r.url());
    if (!u.pathname.startsWith('/v1/')) return;
    const entry = { path: u.pathname + u.search, status: r.status() };
    Object.defineProperty(entry, 'ready', {
      enumerable: false,
      value: r.status() >= 400
        ? r.json().then((body) => { entry.body = body; }, () => { /* not JSON */ })
        : Promise.resolve(),
    });
    page.answers.push(entry);
  });
  return page;
}

/** From here on, what the page asks and is answered. */
function mark(page) {
  return { requests: page.requests.length, answers: page.answers.length };
}
function since(page, m) {
  return { requests: page.requests.slice(m.requests), answers: page.answers.slice(m.answers) };
}

function noErrors(page, what) {
  if (page.errors.length) throw new Error(`${what}: ${page.errors.splice(0).join(' | ')}`);
}

async function enterKey(page, key) {
  await page.waitForSelector('#key');
  await page.fill('#key', key);
  await page.click('button:has-text("Continue")');
}

async function noActions(page, labels, where) {
  for (const label of labels) {
    const n = await page.locator(`main button:text-is("${label}"), main a.button:text-is("${label}"), main a:text-is("${label}")`).count();
    if (n) throw new Error(`${where}: the viewer is offered ${label}`);
  }
}

async function main() {
  if (!AUTO || AUTO === resolve('')) throw new Error('usage: node tests/auth.mjs --auto PATH [--shots DIR]');
  S = await startServer();
  SHOTS = arg('shots', join(work, 'shots'));
  await mkdir(SHOTS, { recursive: true });
  axeSource = await readFile(require.resolve('axe-core/axe.min.js'), 'utf8');
  const STUDIO = `${S.base}/studio/`;
  const P = `${STUDIO}#/orgs/${ORG}/playbooks/${PB}`;
  console.log(`Studio at ${STUDIO} (auto serve with keys at ${S.api})`);
  const seeded = await seed();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  const page = await newPage();

  await step('without a key: the server refuses (401, unauthenticated) and the Studio asks for a key', async () => {
    const bare = await call(null, 'GET', '/v1/me');
    if (bare.status !== 401 || bare.body?.reason !== 'forbidden' || bare.body?.kind !== 'unauthenticated') throw new Error(`GET /v1/me without a key answered ${bare.status} ${JSON.stringify(bare.body)}`);
    await page.goto(`${P}/runs`);
    await page.waitForSelector('#key', { timeout: 10000 });
    const me = page.answers.find((a) => a.path === '/v1/me');
    await me?.ready;
    if (!me || me.status !== 401 || me.body?.kind !== 'unauthenticated') throw new Error(`the Studio's /v1/me was answered ${JSON.stringify(me)}`);
    const text = await page.locator('.key-card').innerText();
    if (!/needs a key/.test(text)) throw new Error(`the prompt reads ${JSON.stringify(text)}`);
    await axe(page, 'key-prompt');
    await shot(page, 'key-prompt');
    noErrors(page, 'key prompt');
  });

  await step('a wrong key is refused with a clear message, and not kept', async () => {
    await enterKey(page, `auto_${'0'.repeat(64)}`);
    const error = page.locator('#key-error[data-key-check="refused"]');
    await error.waitFor({ timeout: 10000 });
    const said = (await error.innerText()).trim();
    if (!/does not know this key/.test(said)) throw new Error(`the wrong key's message reads ${JSON.stringify(said)}`);
    if ((await page.getAttribute('#key', 'aria-invalid')) !== 'true') throw new Error('the key field is not marked invalid');
    const stored = await page.evaluate(() => [sessionStorage.getItem('auto.studio.key'), localStorage.getItem('auto.studio.key')]);
    if (stored.some(Boolean)) throw new Error(`a refused key was kept: ${JSON.stringify(stored)}`);
    await axe(page, 'key-refused');
    await shot(page, 'key-refused');
    noErrors(page, 'wrong key');
  });

  await step('viewer: every page shows its data, with no edit, save, retire, run, cancel or answer', async () => {
    const viewer = S.keys.viewer.key;
    await page.fill('#key', '');
    await enterKey(page, viewer);
    // The address asked for before the prompt is where the Studio goes on.
    await page.waitForSelector(`tr[data-run="${seeded.done}"]`, { timeout: 10000 });
    const from = mark(page);
    await page.waitForSelector('.who:has-text("viewer")');
    await page.waitForSelector('.live [data-status="live"]', { timeout: 15000 });
    await page.goto(STUDIO);
    await page.waitForSelector(`a:has-text("${PB}")`);
    if (await page.locator('#new-pb, #new-org, button:has-text("Create playbook")').count()) throw new Error('a viewer is offered to create playbooks');
    await page.goto(`${P}/definitions`);
    await page.waitForSelector('a:has-text("double")');
    await noActions(page, ['New definition'], 'definitions');
    await page.goto(`${P}/definitions/computation/double`);
    await page.waitForSelector('h1:has-text("double")');
    await page.waitForSelector('.page-head .meta');
    await noActions(page, ['Run', 'Edit', 'Retire'], 'a definition');
    await axe(page, 'viewer-definition');
    await shot(page, 'viewer-definition');
    await page.goto(`${P}/runs/${seeded.waiting}`);
    await page.waitForSelector('.run-page[data-run-status="started"]');
    await noActions(page, ['Cancel run', 'Run again'], 'a waiting run');
    await page.goto(`${P}/inbox`);
    await page.waitForSelector('article.request .message-body:has-text("spring budget")', { timeout: 10000 });
    if (await page.locator('article.request form, button:has-text("Send the answer")').count()) throw new Error('a viewer is offered an answer form');
    const refusal = await page.locator('article.request .role-refusal').innerText();
    if (!/viewer, cannot answer/.test(refusal)) throw new Error(`the inbox says ${JSON.stringify(refusal)}`);
    await axe(page, 'viewer-inbox');
    await shot(page, 'viewer-inbox');
    await page.goto(`${P}/events`);
    await page.waitForSelector('.event-row[data-type="run_started"]');
    // A run started meanwhile reaches the viewer's runs list live.
    await page.goto(`${P}/runs`);
    await page.waitForSelector(`tr[data-run="${seeded.done}"]`);
    await page.waitForSelector('.live [data-status="live"]', { timeout: 15000 });
    const live = await must(S.keys.admin.key, 'POST', pbPath('/definitions/computation/double/runs'), { input: { n: 5 } });
    await page.waitForSelector(`tr[data-run="${live.run_id}"]`, { timeout: 10000 });
    const seen = since(page, from);
    const refused = seen.answers.filter((a) => a.status >= 400);
    if (refused.length) throw new Error(`the Studio asked what a viewer may not: ${refused.map((a) => `${a.status} ${a.path}`).join(', ')}`);
    const api = seen.requests.filter((r) => r.path.startsWith('/v1/'));
    const bare = api.filter((r) => r.auth !== `Bearer ${viewer}`);
    if (bare.length) throw new Error(`${bare.length} requests went without the key: ${bare.map((r) => r.path).join(', ')}`);
    if (!api.some((r) => r.path.includes('/events/stream'))) throw new Error('no event stream was opened');
    measured.viewerRequests = api.length;
    noErrors(page, 'viewer pages');
  });

  await step('viewer: an edit, new-definition or start-run address says the role cannot, and loads no editor', async () => {
    const from = mark(page);
    for (const [path, what, name] of [
      ['/definitions/computation/double/edit', 'cannot edit definitions', 'viewer-edit'],
      ['/definitions/new', 'cannot edit definitions', 'viewer-new'],
      ['/definitions/computation/double/run', 'cannot start runs', 'viewer-run'],
    ]) {
      await page.goto(`${P}${path}`);
      const box = page.locator('.role-refusal[role="alert"]');
      await box.waitFor({ timeout: 10000 });
      const text = await box.innerText();
      if (!text.includes(`Your role, viewer, ${what}`)) throw new Error(`${path} says ${JSON.stringify(text)}`);
      if (!(await box.locator('a').count())) throw new Error(`${path} offers no way back`);
      if (await page.locator('.cm-editor, form button[type="submit"]:has-text("Start the run")').count()) throw new Error(`${path} shows its form to a viewer`);
      await axe(page, name);
      await shot(page, name);
    }
    const seen = since(page, from);
    if (seen.requests.some((r) => /\/assets\/editor-/.test(r.path))) throw new Error('the editor was loaded for a viewer');
    if (seen.requests.some((r) => r.path.includes('/definitions/check'))) throw new Error('the editor checked a document for a viewer');
    const refused = seen.answers.filter((a) => a.status >= 400);
    if (refused.length) throw new Error(`refused: ${refused.map((a) => `${a.status} ${a.path}`).join(', ')}`);
    noErrors(page, 'viewer refusals');
  });

  await step('runner: may run and answer, may not edit', async () => {
    await page.goto(`${P}/definitions`);
    await page.click('button:has-text("Change key")');
    await enterKey(page, S.keys.runner.key);
    await page.waitForSelector('.who:has-text("runner")');
    await page.goto(`${P}/definitions/computation/double`);
    await page.waitForSelector('.page-head .actions a:text-is("Run")');
    if (await page.locator('.page-head .actions :text-is("Edit"), .page-head .actions :text-is("Retire")').count()) throw new Error('a runner is offered Edit or Retire');
    await page.goto(`${P}/inbox`);
    await page.waitForSelector('article.request button:has-text("Send the answer")');
    await page.goto(`${P}/definitions/computation/double/edit`);
    const text = await page.locator('.role-refusal').innerText();
    if (!text.includes('Your role, runner, cannot edit definitions')) throw new Error(`the editor says ${JSON.stringify(text)} to a runner`);
    noErrors(page, 'runner');
  });

  await step('admin: starts a run from its form, sees it end and join the runs list, cancels a waiting run', async () => {
    await page.goto(`${P}/definitions`);
    await page.click('button:has-text("Change key")');
    await enterKey(page, S.keys.admin.key);
    await page.waitForSelector('.who:has-text("admin")');
    await page.waitForSelector('main a:has-text("New definition")');
    await page.goto(`${P}/definitions/computation/double`);
    for (const label of ['Run', 'Edit', 'Retire']) await page.waitForSelector(`.page-head .actions :text-is("${label}")`);
    await page.goto(`${P}/runs`);
    await page.waitForSelector(`tr[data-run="${seeded.done}"]`);
    await page.waitForSelector('.live [data-status="live"]', { timeout: 15000 });
    await page.goto(`${P}/definitions/computation/double/run`);
    const n = page.locator('[data-pointer="/n"] input').first();
    await n.waitFor();
    await n.fill('20');
    await page.click('button:has-text("Start the run")');
    await page.waitForURL(/\/runs\/[^/]+$/, { timeout: 15000 });
    const runId = decodeURIComponent(page.url().split('/runs/')[1]);
    await page.waitForSelector('.run-page[data-run-status="succeeded"]', { timeout: 15000 });
    const run = await must(S.keys.admin.key, 'GET', pbPath(`/runs/${encodeURIComponent(runId)}`));
    if (run.output?.double !== 40 || run.started_by !== S.callers.admin) throw new Error(`the run is ${JSON.stringify({ output: run.output, started_by: run.started_by })}`);
    await axe(page, 'admin-run');
    await shot(page, 'admin-run');
    await page.click('nav[aria-label="Playbook"] a:has-text("Runs")');
    await page.waitForSelector(`tr[data-run="${runId}"] td:has-text("${S.callers.admin}")`, { timeout: 10000 });
    await page.goto(`${P}/runs/${seeded.waiting}`);
    await page.waitForSelector('.run-page[data-run-status="started"]');
    page.once('dialog', (d) => d.accept());
    await page.click('button:has-text("Cancel run")');
    await page.waitForSelector('.run-page[data-run-status="rejected"]', { timeout: 10000 });
    noErrors(page, 'admin');
  });

  await step('the key survives a reload; a key the server no longer takes brings the prompt back', async () => {
    await page.reload();
    await page.waitForSelector('.who:has-text("admin")', { timeout: 10000 });
    const stored = await page.evaluate(() => sessionStorage.getItem('auto.studio.key'));
    if (stored !== S.keys.admin.key) throw new Error('the key is not kept in sessionStorage');
    await page.evaluate(() => sessionStorage.setItem('auto.studio.key', `auto_${'1'.repeat(64)}`));
    await page.goto(`${P}/runs`);
    await page.reload();
    await page.waitForSelector('#key', { timeout: 10000 });
    const text = await page.locator('.key-card').innerText();
    if (!/no longer takes the key/.test(text)) throw new Error(`the prompt reads ${JSON.stringify(text)}`);
    await enterKey(page, S.keys.viewer.key);
    await page.waitForSelector(`tr[data-run="${seeded.done}"]`, { timeout: 10000 });
    noErrors(page, 'reload');
  });

  await browser.close();
}

try {
  await main();
} catch (error) {
  results.push({ name: 'setup', ok: false, error: String(error?.stack || error) });
  console.log(`FAIL setup: ${error?.message || error}`);
  if (browser) await browser.close().catch(() => {});
} finally {
  for (const child of children) child.kill();
}

const failed = results.filter((r) => !r.ok);
console.log('\nmeasured:', JSON.stringify(measured));
console.log('axe (violations of any impact / serious or critical):', axeSeen.join(', '));
if (SHOTS) console.log(`screenshots in ${SHOTS}`);
console.log(`${results.length - failed.length} passed, ${failed.length} failed`);
if (failed.length) {
  for (const f of failed) console.log(`\n--- ${f.name}\n${f.error}`);
  if (S) console.log(`\nserver log (last lines):\n${S.log.join('').split('\n').slice(-30).join('\n')}`);
  process.exit(1);
}
