// The one driver of the peer benchmark: the same code measures every system.
//
//   node driver.mjs measure --system NAME --url URL [--shape plain|auto] [--warmup N]
//                           [--runs N] [--throughput-runs N] [--concurrency N] [--out FILE]
//   node driver.mjs report FILE
//
// `measure` POSTs the workload's input to URL over keep-alive HTTP/1.1 connections and checks
// that every run ends with {x: 3}: --warmup runs one at a time that are not counted, then --runs
// one at a time (latency: p50, p99), then --throughput-runs with --concurrency in flight
// (workflows/s). Any other answer stops it with exit code 1. Its figures are printed and, with
// --out, appended to FILE as a JSON line.
//
// The shape says what is sent and what an answer is:
// - plain: the body is the input, {"x": 0}, and the answer's body is the output (Restate's
//   ingress, the DBOS app).
// - auto: the body is {"input": {"x": 0}}; the answer is the run, 200 with `status` and
//   `output`, or 202 with `run_id` for a run that goes on, which is then followed at
//   .../runs/{run_id} until it ends (the load example does the same).
//
// `report` prints the Markdown table of every line of FILE and auto's ratios to its peers.

import http from "node:http";
import fs from "node:fs";
import { isDeepStrictEqual } from "node:util";

const INPUT = { x: 0 };
const EXPECTED = { x: 3 };
const REQUEST_TIMEOUT_MS = 30_000;

function fail(message) {
  console.error(`driver: ${message}`);
  process.exit(1);
}

function parseOptions(words) {
  const options = {
    shape: "plain",
    warmup: 20,
    runs: 200,
    throughputRuns: 400,
    concurrency: 16,
  };
  const numbers = {
    "--warmup": "warmup",
    "--runs": "runs",
    "--throughput-runs": "throughputRuns",
    "--concurrency": "concurrency",
  };
  const texts = { "--system": "system", "--url": "url", "--shape": "shape", "--out": "out" };
  for (let i = 0; i < words.length; i += 2) {
    const [flag, value] = [words[i], words[i + 1]];
    if (value === undefined) fail(`${flag} needs a value`);
    if (flag in numbers) {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 0) fail(`${flag} ${value}: not a whole number`);
      options[numbers[flag]] = n;
    } else if (flag in texts) {
      options[texts[flag]] = value;
    } else {
      fail(`${flag} is not an option`);
    }
  }
  if (!options.system || !options.url) fail("measure needs --system and --url");
  if (!["plain", "auto"].includes(options.shape)) fail(`--shape ${options.shape}: plain or auto`);
  if (options.runs < 1 || options.throughputRuns < 1 || options.concurrency < 1) {
    fail("--runs, --throughput-runs and --concurrency must be at least 1");
  }
  return options;
}

/// One HTTP exchange on the keep-alive agent; resolves with the status and the parsed body.
function exchange(agent, method, url, body) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const request = http.request(
      url,
      {
        method,
        agent,
        headers: payload
          ? { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }
          : {},
      },
      (response) => {
        const chunks = [];
        response.on("data", (chunk) => chunks.push(chunk));
        response.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let parsed;
          try {
            parsed = text.length ? JSON.parse(text) : null;
          } catch {
            parsed = undefined;
          }
          resolve({ status: response.statusCode, text, body: parsed });
        });
        response.on("error", reject);
      },
    );
    request.setTimeout(REQUEST_TIMEOUT_MS, () =>
      request.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)),
    );
    request.on("error", reject);
    request.end(payload);
  });
}

/// One workflow, started and checked; resolves with its latency in ms.
async function oneRun(agent, options) {
  const started = process.hrtime.bigint();
  const body = options.shape === "auto" ? { input: INPUT } : INPUT;
  let answer;
  try {
    answer = await exchange(agent, "POST", options.url, body);
  } catch (error) {
    fail(`${options.system}: POST ${options.url}: ${error.message}`);
  }
  let output;
  if (options.shape === "plain") {
    if (answer.status !== 200) fail(`${options.system}: answered ${answer.status}: ${answer.text}`);
    output = answer.body;
  } else {
    let run = answer.body;
    if (answer.status === 202 && run && typeof run.run_id === "string") {
      run = await followed(agent, options, run.run_id);
    } else if (answer.status !== 200) {
      fail(`${options.system}: answered ${answer.status}: ${answer.text}`);
    }
    if (!run || run.status !== "succeeded") {
      fail(`${options.system}: the run did not succeed: ${JSON.stringify(run)}`);
    }
    output = run.output;
  }
  if (!isDeepStrictEqual(output, EXPECTED)) {
    fail(
      `${options.system}: a run ended with ${JSON.stringify(output)}, not ${JSON.stringify(EXPECTED)}`,
    );
  }
  return Number(process.hrtime.bigint() - started) / 1e6;
}

/// auto's run that answered 202, polled until it is no longer `started`.
async function followed(agent, options, runId) {
  const at = options.url.indexOf("/definitions/");
  if (at < 0) fail(`${options.system}: cannot follow a run from ${options.url}`);
  const url = `${options.url.slice(0, at)}/runs/${runId}`;
  const deadline = Date.now() + REQUEST_TIMEOUT_MS;
  for (;;) {
    let answer;
    try {
      answer = await exchange(agent, "GET", url);
    } catch (error) {
      fail(`${options.system}: GET ${url}: ${error.message}`);
    }
    if (answer.status !== 200) fail(`${options.system}: GET ${url} answered ${answer.status}`);
    if (answer.body?.status !== "started") return answer.body;
    if (Date.now() > deadline) fail(`${options.system}: run ${runId} did not end in time`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/// `count` runs with at most `concurrency` in flight; resolves with latencies and elapsed ms.
async function fire(agent, options, count, concurrency) {
  let next = 0;
  const latencies = [];
  const started = process.hrtime.bigint();
  const worker = async () => {
    while (next < count) {
      next += 1;
      latencies.push(await oneRun(agent, options));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return { latencies, elapsedMs: Number(process.hrtime.bigint() - started) / 1e6 };
}

/// The load example's percentile: the value at rank ceil(p/100 * n), 1-based.
function percentile(sorted, p) {
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(Math.max(rank, 1), sorted.length) - 1];
}

async function measure(options) {
  const agent = new http.Agent({
    keepAlive: true,
    maxSockets: options.concurrency,
    maxFreeSockets: options.concurrency,
  });
  if (options.warmup > 0) await fire(agent, options, options.warmup, 1);
  const sequential = await fire(agent, options, options.runs, 1);
  const sorted = [...sequential.latencies].sort((a, b) => a - b);
  const parallel = await fire(agent, options, options.throughputRuns, options.concurrency);
  agent.destroy();
  const result = {
    system: options.system,
    p50_ms: percentile(sorted, 50),
    p99_ms: percentile(sorted, 99),
    max_ms: sorted[sorted.length - 1],
    workflows_per_s: (options.throughputRuns / parallel.elapsedMs) * 1000,
    warmup: options.warmup,
    runs: options.runs,
    throughput_runs: options.throughputRuns,
    concurrency: options.concurrency,
  };
  console.log(
    `${result.system}: p50 ${result.p50_ms.toFixed(1)} ms, p99 ${result.p99_ms.toFixed(1)} ms ` +
      `(${options.runs} one at a time after ${options.warmup} warm-up); ` +
      `${result.workflows_per_s.toFixed(0)} workflows/s (${options.throughputRuns} at ` +
      `${options.concurrency} in flight); every run ended with ${JSON.stringify(EXPECTED)}`,
  );
  if (options.out) fs.appendFileSync(options.out, `${JSON.stringify(result)}\n`);
}

function report(file) {
  const lines = fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n") : [];
  const results = lines.filter((line) => line.trim()).map((line) => JSON.parse(line));
  if (results.length === 0) fail(`no results in ${file}`);
  const one = (value) => value.toFixed(1);
  console.log("| system | p50 ms | p99 ms | workflows/s |");
  console.log("|---|---|---|---|");
  for (const r of results) {
    console.log(`| ${r.system} | ${one(r.p50_ms)} | ${one(r.p99_ms)} | ${r.workflows_per_s.toFixed(0)} |`);
  }
  // Systems are found by the start of their label, which the run script sets.
  const find = (prefix) => results.find((r) => r.system.startsWith(prefix));
  const [autoSqlite, autoPg, restate, dbosPg] = [
    find("auto (SQLite"),
    find("auto (PostgreSQL"),
    find("Restate"),
    find("DBOS 3.4.0 (PostgreSQL"),
  ];
  const ratio = (label, a, b, field) => {
    const text = a && b ? (a[field] / b[field]).toFixed(2) : "n/a (not both measured)";
    console.log(`- ${label}: ${text}`);
  };
  console.log("");
  console.log("auto's ratios (latency: lower is better for auto; throughput: higher is):");
  ratio("auto SQLite p50 / Restate p50", autoSqlite, restate, "p50_ms");
  ratio("auto SQLite throughput / Restate throughput", autoSqlite, restate, "workflows_per_s");
  ratio("auto PG throughput / DBOS-PG throughput", autoPg, dbosPg, "workflows_per_s");
  ratio("auto PG p50 / DBOS-PG p50", autoPg, dbosPg, "p50_ms");
}

const [command, ...rest] = process.argv.slice(2);
if (command === "measure") {
  await measure(parseOptions(rest));
} else if (command === "report" && rest.length === 1) {
  report(rest[0]);
} else {
  fail("usage: driver.mjs measure --system NAME --url URL [options] | report FILE");
}
