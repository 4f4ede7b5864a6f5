// A user's script on openapi-fetch with the types openapi-typescript generated from the
// server's OpenAPI document (`./api`), compiled by tsc in strict mode: saves a computation
// and an interaction, runs the computation (200, its output), starts the interaction (202,
// started), answers its request from the inbox and waits for the run to succeed. Prints one
// line of JSON with what it saw.
//
//   node client.js BASE_URL ORG PLAYBOOK
import createClient from "openapi-fetch";
import type { components, paths } from "./api.js";

// What the script reads of Node, without installing Node's type definitions for two names.
declare const process: { argv: string[]; exit(code: number): never };

type RunOut = components["schemas"]["RunOut"];

const ADD_ONE = `---
description: Adds one.
input:
  schema: {type: object, required: [x], properties: {x: {type: integer}}}
output:
  schema: {type: object, required: [x], properties: {x: {type: integer}}}
---
\`\`\`ts
export default function (input: { x: number }) {
  return { x: input.x + 1 };
}
\`\`\`
`;

const APPROVE = `---
description: Asks for an approval.
to: ops@example.com
expires: P1D
output:
  schema: {type: object, required: [approved], properties: {approved: {type: boolean}}}
---
Approve the release of {{ input.release }}?
`;

function check(condition: boolean, what: string): asserts condition {
  if (!condition) throw new Error(what);
}

async function main(): Promise<void> {
  const [base, org, pb] = process.argv.slice(2);
  const client = createClient<paths>({ baseUrl: base });
  const path = { org, pb };
  const seen: Record<string, unknown> = {};
  const definitions: Array<[components["schemas"]["DefinitionType"], string, string]> = [
    ["computation", "add-one", ADD_ONE],
    ["interaction", "approve", APPROVE],
  ];
  for (const [type, name, source] of definitions) {
    const saved = await client.POST("/v1/orgs/{org}/playbooks/{pb}/definitions", {
      params: { path },
      body: { type, name, source, diagram: "none" },
    });
    check(saved.response.status === 201, `saved ${name}: ${JSON.stringify(saved.error)}`);
  }
  const runs = "/v1/orgs/{org}/playbooks/{pb}/definitions/{type}/{name}/runs" as const;
  const ran = await client.POST(runs, {
    params: { path: { ...path, type: "computation", name: "add-one" } },
    body: { input: { x: 41 } },
  });
  check(ran.response.status === 200 && ran.data !== undefined, JSON.stringify(ran.error));
  const ended: RunOut = ran.data;
  check(ended.status === "succeeded", JSON.stringify(ended));
  seen.computation = ended.output;

  const refused = await client.POST(runs, {
    params: { path: { ...path, type: "computation", name: "add-one" } },
    body: { input: { x: "forty" } },
  });
  check(refused.response.status === 422 && refused.error !== undefined, "refused");
  seen.refused = refused.error.reason;

  const started = await client.POST(runs, {
    params: { path: { ...path, type: "interaction", name: "approve" } },
    body: { input: { release: "2.0" }, run_id: "release-2" },
  });
  check(started.response.status === 202 && started.data !== undefined, "started");
  seen.started = started.data.status;

  const inbox = await client.GET("/v1/orgs/{org}/playbooks/{pb}/requests", {
    params: { path, query: { status: "open" } },
  });
  check(inbox.data !== undefined && inbox.data.requests.length === 1, "one request");
  const request = inbox.data.requests[0];
  seen.message = request.message;
  const answered = await client.POST(
    "/v1/orgs/{org}/playbooks/{pb}/requests/{request_id}/answer",
    { params: { path: { ...path, request_id: request.request_id } }, body: { answer: { approved: true } } },
  );
  check(answered.data?.status === "answered", "answered");

  let run: RunOut | undefined;
  for (let i = 0; i < 100; i++) {
    const read = await client.GET("/v1/orgs/{org}/playbooks/{pb}/runs/{run_id}", {
      params: { path: { ...path, run_id: "release-2" } },
    });
    run = read.data;
    if (run?.status !== "started") break;
    await new Promise((done) => setTimeout(done, 100));
  }
  check(run?.status === "succeeded", JSON.stringify(run));
  seen.interaction = run.output;
  console.log(JSON.stringify(seen));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
