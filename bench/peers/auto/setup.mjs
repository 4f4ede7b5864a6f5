// Prepares a fresh auto server for the workload, as the load example does: the org, the
// playbook, the computation `add-one` and the workflow `add-three-times` that calls it three
// times (the files beside this one, the load example's `ADD_ONE` and `add_three_times()`).
// Prints the URL that starts a run.
//
//   node setup.mjs BASE_URL
import fs from "node:fs";

const base = process.argv[2];
if (!base) {
  console.error("usage: setup.mjs BASE_URL");
  process.exit(2);
}
const here = new URL(".", import.meta.url);
const read = (name) => fs.readFileSync(new URL(name, here), "utf8");

async function post(path, body) {
  const response = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) {
    console.error(`setup: POST ${path}: ${response.status} ${await response.text()}`);
    process.exit(1);
  }
}

const playbook = "/v1/orgs/peers/playbooks/p0";
await post("/v1/orgs", { id: "peers" });
await post("/v1/orgs/peers/playbooks", { id: "p0", title: "Peers" });
await post(`${playbook}/definitions`, {
  type: "computation",
  name: "add-one",
  source: read("add-one.md"),
  diagram: "none",
});
await post(`${playbook}/definitions`, {
  type: "workflow",
  name: "add-three-times",
  source: read("add-three-times.yaml"),
  diagram: "none",
});
console.log(`${base}${playbook}/definitions/workflow/add-three-times/runs`);
