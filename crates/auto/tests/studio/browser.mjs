// Opens pages of the Studio in Debian's Chromium, driven by playwright-core, and checks each as
// a person would meet it: it loads without a script error or a refusal of the page's own
// Content-Security-Policy, shows the text it must, has no serious or critical accessibility
// violation (axe-core), and loads within its budget. A screenshot of each page is kept.
//
//   node browser.mjs --tools DIR --shots DIR --page 'NAME|URL|TEXT' [--page ...]
//
// DIR of --tools holds node_modules with playwright-core and axe-core (scripts/studio-browser).
// Prints one JSON line per page ({name, load_ms, violations}) and exits 1 on the first failure.

import { createRequire } from "node:module";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** The longest a page may take to load and show its text. */
const FIRST_LOAD_MS_MAX = 1000;
/** How long a page's text may take to appear after it loaded (its API calls). */
const TEXT_TIMEOUT_MS = 10000;
/** How long a page is given, once its text shows, to finish drawing (charts, diagrams). */
const SETTLE_MS = 500;

function parseArgs(argv) {
  const args = { pages: [] };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === "--tools") args.tools = value;
    else if (flag === "--shots") args.shots = value;
    else if (flag === "--page") {
      const [name, url, text] = value.split("|");
      if (!name || !url || !text) throw new Error(`--page ${value}: NAME|URL|TEXT`);
      args.pages.push({ name, url, text });
    } else throw new Error(`unknown flag ${flag}`);
  }
  if (!args.tools || !args.shots || args.pages.length === 0) {
    throw new Error("usage: browser.mjs --tools DIR --shots DIR --page 'NAME|URL|TEXT' ...");
  }
  return args;
}

const args = parseArgs(process.argv.slice(2));
const require = createRequire(join(args.tools, "package.json"));
const { chromium } = require("playwright-core");
const axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
mkdirSync(args.shots, { recursive: true });

// Playwright gives each launch a fresh profile of its own.
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});

let failed = false;
try {
  for (const page of args.pages) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const tab = await context.newPage();
    const errors = [];
    tab.on("pageerror", (error) => errors.push(`script error: ${error.message}`));
    tab.on("console", (message) => {
      // A failed load is told below with its address; the console's words lack it.
      if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
        errors.push(`console error: ${message.text()}`);
      }
    });
    tab.on("response", (response) => {
      if (response.status() >= 400) errors.push(`${response.status()} from ${response.url()}`);
    });
    tab.on("requestfailed", (request) =>
      errors.push(`request failed: ${request.url()} ${request.failure()?.errorText ?? ""}`),
    );
    const started = Date.now();
    await tab.goto(page.url, { waitUntil: "load" });
    const loadMs = Date.now() - started;
    await tab.getByText(page.text, { exact: false }).first().waitFor({ timeout: TEXT_TIMEOUT_MS });
    // Not "networkidle": a page that follows the log holds its events stream open.
    await tab.waitForTimeout(SETTLE_MS);
    await tab.screenshot({ path: join(args.shots, `${page.name}.png`), fullPage: true });
    // Evaluated over the DevTools protocol, which the page's CSP does not govern.
    await tab.evaluate(axeSource);
    const results = await tab.evaluate(() =>
      // eslint-disable-next-line no-undef
      axe.run(document, { resultTypes: ["violations"] }),
    );
    const violations = results.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
    console.log(JSON.stringify({ name: page.name, load_ms: loadMs, violations: violations.length }));
    const problems = [...errors, ...violations];
    if (loadMs > FIRST_LOAD_MS_MAX) problems.push(`loaded in ${loadMs} ms, more than ${FIRST_LOAD_MS_MAX}`);
    if (problems.length > 0) {
      failed = true;
      console.error(`page ${page.name} (${page.url}):\n  ${problems.join("\n  ")}`);
    }
    await context.close();
  }
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
