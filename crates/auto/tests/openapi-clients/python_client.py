"""A user's script on the Python client openapi-python-client generated from the server's
OpenAPI document: saves a computation and an interaction, runs the computation (200, its
output), starts the interaction (202, started), answers its request from the inbox and waits
for the run to succeed. Prints one line of JSON with what it saw.

    python python_client.py BASE_URL ORG PLAYBOOK   (the generated auto_client on PYTHONPATH)
"""

import json
import sys
import time

from auto_client import Client
from auto_client.api.definitions import create_definition
from auto_client.api.requests import answer_interaction, list_requests
from auto_client.api.runs import get_run, run_definition
from auto_client.models import (
    AnswerInteraction,
    CreateDefinition,
    DefinitionType,
    Problem,
    RequestStatus,
    RunDefinition,
    RunDefinitionInput,
    RunOut,
    RunStatus,
)

ADD_ONE = """---
description: Adds one.
input:
  schema: {type: object, required: [x], properties: {x: {type: integer}}}
output:
  schema: {type: object, required: [x], properties: {x: {type: integer}}}
---
```ts
export default function (input: { x: number }) {
  return { x: input.x + 1 };
}
```
"""

APPROVE = """---
description: Asks for an approval.
to: ops@example.com
expires: P1D
output:
  schema: {type: object, required: [approved], properties: {approved: {type: boolean}}}
---
Approve the release of {{ input.release }}?
"""


def main() -> None:
    base, org, pb = sys.argv[1:4]
    client = Client(base_url=base, raise_on_unexpected_status=True)
    seen = {}
    for kind, name, source in [
        (DefinitionType.COMPUTATION, "add-one", ADD_ONE),
        (DefinitionType.INTERACTION, "approve", APPROVE),
    ]:
        saved = create_definition.sync_detailed(
            org, pb, client=client,
            body=CreateDefinition(type_=kind, name=name, source=source, diagram="none"),
        )
        assert saved.status_code == 201, saved.content
    body = RunDefinition(input_=RunDefinitionInput.from_dict({"x": 41}))
    ran = run_definition.sync_detailed(
        org, pb, DefinitionType.COMPUTATION, "add-one", client=client, body=body)
    assert ran.status_code == 200 and isinstance(ran.parsed, RunOut), ran.content
    assert ran.parsed.status == RunStatus.SUCCEEDED, ran.parsed
    seen["computation"] = ran.parsed.output

    refused = run_definition.sync_detailed(
        org, pb, DefinitionType.COMPUTATION, "add-one", client=client,
        body=RunDefinition(input_=RunDefinitionInput.from_dict({"x": "forty"})))
    assert refused.status_code == 422 and isinstance(refused.parsed, Problem), refused.content
    seen["refused"] = refused.parsed.reason.value

    started = run_definition.sync_detailed(
        org, pb, DefinitionType.INTERACTION, "approve", client=client,
        body=RunDefinition(input_=RunDefinitionInput.from_dict({"release": "2.0"}),
                           run_id="release-2"))
    assert started.status_code == 202 and isinstance(started.parsed, RunOut), started.content
    assert started.parsed.status == RunStatus.STARTED, started.parsed
    seen["started"] = started.parsed.status.value

    inbox = list_requests.sync(org, pb, client=client, status=RequestStatus.OPEN)
    assert len(inbox.requests) == 1, inbox
    request = inbox.requests[0]
    seen["message"] = request.message
    answered = answer_interaction.sync(
        org, pb, request.request_id, client=client,
        body=AnswerInteraction(answer={"approved": True}))
    assert answered.status == RequestStatus.ANSWERED, answered

    for _ in range(100):
        run = get_run.sync(org, pb, "release-2", client=client)
        if run.status != RunStatus.STARTED:
            break
        time.sleep(0.1)
    assert run.status == RunStatus.SUCCEEDED, run
    seen["interaction"] = run.output
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
