// The package against a live server (crates/auto/tests/clients.rs runs it): a computation run
// and waited for, a refusal thrown with its problem, an interaction started, waited for while
// its request is answered from the inbox, and its events followed in order. Prints one line of
// JSON with what it saw.
import { Auto, AutoError, ENDINGS } from "../src/index.js";

declare const process: { argv: string[]; exit(code: number): never };

const ADD_ONE = `---
input:
  schema: {type: object, required: [x], properties: {x: {type: integer}}}
---
\`\`\`ts
export default function (input: { x: number }) {
  return { x: input.x + 1 };
}
\`\`\`
`;

const APPROVE = `---
to: ops@example.com
expires: P1D
output:
  schema: {type: object, required: [approved], properties: {approved: {type: boolean}}}
---
Approve the release of {{ input.release }}?
`;

async function main(): Promise<void> {
  const [baseUrl, org, playbook] = process.argv.slice(2);
  const auto = new Auto({ baseUrl, org, playbook });
  const seen: Record<string, unknown> = {};
  await auto.save("computation", "add-one", ADD_ONE);
  await auto.save("interaction", "approve", APPROVE);
  seen.computation = (await auto.run("computation", "add-one", { x: 41 })).output;
  try {
    await auto.run("computation", "add-one", { x: "forty" });
  } catch (error) {
    if (error instanceof AutoError) seen.refused = error.problem.reason;
  }
  const started = await auto.run("interaction", "approve", { release: "2.0" }, {
    runId: "release-2",
    wait: false,
  });
  seen.started = started.status;
  const ended = auto.wait("release-2", 60_000);
  const [request] = await auto.requests("open");
  try {
    await auto.answer(request.request_id, { approved: "yes" });
  } catch (error) {
    if (error instanceof AutoError) seen.wrong_answer = error.problem.reason;
  }
  await auto.answer(request.request_id, { approved: true });
  seen.interaction = (await ended).output;
  const events: string[] = [];
  for await (const event of auto.follow("release-2", { timeoutMs: 30_000 })) {
    events.push(event.type);
    if (ENDINGS.includes(event.type)) break;
  }
  seen.events = events;
  console.log(JSON.stringify(seen));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
