"""The package against a live server (crates/auto/tests/clients.rs runs it): a computation run
and waited for, a refusal raised with its problem, an interaction started, waited for on
another thread while its request is answered from the inbox, and its events followed in order.
Prints one line of JSON with what it saw.

    PYTHONPATH=clients/python python clients/python/tests/live.py BASE_URL ORG PLAYBOOK
"""

import json
import sys
import threading

from auto_client import Auto, AutoError

ADD_ONE = """---
input:
  schema: {type: object, required: [x], properties: {x: {type: integer}}}
---
```ts
export default function (input: { x: number }) {
  return { x: input.x + 1 };
}
```
"""

APPROVE = """---
to: ops@example.com
expires: P1D
output:
  schema: {type: object, required: [approved], properties: {approved: {type: boolean}}}
---
Approve the release of {{ input.release }}?
"""


def main() -> None:
    base, org, playbook = sys.argv[1:4]
    auto = Auto(base, org=org, playbook=playbook)
    seen = {}
    auto.save("computation", "add-one", ADD_ONE)
    auto.save("interaction", "approve", APPROVE)
    seen["computation"] = auto.run("computation", "add-one", {"x": 41}).output
    try:
        auto.run("computation", "add-one", {"x": "forty"})
    except AutoError as error:
        seen["refused"] = error.problem["reason"]

    started = auto.run("interaction", "approve", {"release": "2.0"}, run_id="release-2", wait=False)
    seen["started"] = started.status.value
    ended = {}
    waiter = threading.Thread(target=lambda: ended.update(run=auto.wait("release-2", timeout=60)))
    waiter.start()
    [request] = auto.requests("open")
    try:
        auto.answer(request.request_id, {"approved": "yes"})
    except AutoError as error:
        seen["wrong_answer"] = error.problem["reason"]
    auto.answer(request.request_id, {"approved": True})
    waiter.join(60)
    seen["interaction"] = ended["run"].output
    seen["events"] = [
        event["type"]
        for event in _until_ended(auto.follow("release-2", timeout=30))
    ]
    print(json.dumps(seen))


def _until_ended(events):
    for event in events:
        yield event
        if event["type"] in ("run_succeeded", "run_rejected", "run_failed"):
            return


if __name__ == "__main__":
    main()
