"""A client of auto: the API generated from the server's OpenAPI document (`auto_api`, every
operation and model), and the few things most programs do with it, written by hand here:
save a definition, run it and wait for its ending, follow a run's events as they are recorded,
and answer the requests in the inbox.

    from auto_client import Auto

    auto = Auto("http://127.0.0.1:8040", org="acme", playbook="main")
    run = auto.run("computation", "add-one", {"x": 41})
    print(run.output)
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx

from auto_api import AuthenticatedClient, Client
from auto_api.api.definitions import create_definition
from auto_api.api.requests import answer_interaction, list_requests
from auto_api.api.runs import get_run, run_definition
from auto_api.models import (
    AnswerInteraction,
    CreateDefinition,
    DefinitionOut,
    DefinitionType,
    Problem,
    RequestOut,
    RequestStatus,
    RunDefinition,
    RunDefinitionInput,
    RunOut,
    RunStatus,
)

__all__ = ["Auto", "AutoError", "ENDINGS"]

#: The event types that end a run.
ENDINGS = ("run_succeeded", "run_rejected", "run_failed")


class AutoError(Exception):
    """A refusal of the server, with its problem document."""

    def __init__(self, problem: Problem | dict[str, Any]):
        self.problem = problem.to_dict() if isinstance(problem, Problem) else problem
        super().__init__(f"{self.problem.get('title')}: {self.problem.get('detail')}")


class Auto:
    """One playbook of one server, with a key when the server has keys."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8040",
        *,
        org: str,
        playbook: str,
        key: str | None = None,
        timeout: float = 60.0,
    ):
        self.org, self.playbook = org, playbook
        self.base_url = base_url.rstrip("/")
        self.headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.api: Client | AuthenticatedClient = (
            AuthenticatedClient(base_url=self.base_url, token=key, timeout=httpx.Timeout(timeout))
            if key
            else Client(base_url=self.base_url, timeout=httpx.Timeout(timeout))
        )

    def _answer(self, response: Any, *statuses: int) -> Any:
        if response.status_code in statuses:
            return response.parsed
        body = json.loads(response.content) if response.content else {}
        raise AutoError(body)

    def save(self, type: str, name: str, source: str, diagram: str = "none") -> DefinitionOut:
        """Saves version 1 of a definition."""
        body = CreateDefinition(type_=DefinitionType(type), name=name, source=source, diagram=diagram)
        return self._answer(
            create_definition.sync_detailed(self.org, self.playbook, client=self.api, body=body), 201
        )

    def run(
        self,
        type: str,
        name: str,
        input: dict[str, Any] | None = None,
        *,
        run_id: str | None = None,
        wait: bool = True,
        timeout: float = 300.0,
    ) -> RunOut:
        """Runs a definition; with `wait`, a run that goes on is followed to its ending."""
        body = RunDefinition(input_=RunDefinitionInput.from_dict(input or {}))
        if run_id is not None:
            body.run_id = run_id
        response = run_definition.sync_detailed(
            self.org, self.playbook, DefinitionType(type), name, client=self.api, body=body
        )
        run: RunOut = self._answer(response, 200, 202)
        if wait and run.status == RunStatus.STARTED:
            return self.wait(run.run_id, timeout=timeout)
        return run

    def get_run(self, run_id: str) -> RunOut:
        return self._answer(get_run.sync_detailed(self.org, self.playbook, run_id, client=self.api), 200)

    def wait(self, run_id: str, *, timeout: float = 300.0) -> RunOut:
        """The run once it has ended: its events followed until the ending is recorded."""
        run = self.get_run(run_id)
        if run.status != RunStatus.STARTED:
            return run
        for event in self.follow(run_id, timeout=timeout):
            if event["type"] in ENDINGS:
                break
        return self.get_run(run_id)

    def follow(
        self, run_id: str | None = None, *, after: int | str = 0, timeout: float = 300.0
    ) -> Iterator[dict[str, Any]]:
        """The playbook's events in order as they are recorded (a run's, with `run_id`), from
        the server-sent events stream, resumed after the last one read when the connection
        drops; ends when the caller stops reading or `timeout` passes."""
        deadline = time.monotonic() + timeout
        last = str(after)
        url = f"{self.base_url}/v1/orgs/{self.org}/playbooks/{self.playbook}/events/stream"
        while time.monotonic() < deadline:
            params = {"after": last}
            if run_id is not None:
                params["run_id"] = run_id
            try:
                with httpx.stream(
                    "GET", url, params=params, headers=self.headers,
                    timeout=httpx.Timeout(10.0, read=max(1.0, deadline - time.monotonic())),
                ) as response:
                    if response.status_code != 200:
                        response.read()
                        raise AutoError(json.loads(response.content))
                    data: list[str] = []
                    for line in response.iter_lines():
                        if line.startswith("id:"):
                            last = line[3:].strip()
                        elif line.startswith("data:"):
                            data.append(line[5:].strip())
                        elif line == "" and data:
                            yield json.loads("\n".join(data))
                            data = []
            except httpx.ReadTimeout:
                return
            except httpx.TransportError:
                time.sleep(0.2)

    def requests(self, status: str = "open") -> list[RequestOut]:
        """The inbox: the requests of `status`, newest first."""
        found = self._answer(
            list_requests.sync_detailed(
                self.org, self.playbook, client=self.api, status=RequestStatus(status)
            ),
            200,
        )
        return list(found.requests)

    def answer(self, request_id: str, answer: Any) -> RequestOut:
        """Answers a request; an answer that misses what it asks for raises, and it stays open."""
        body = AnswerInteraction(answer=answer)
        return self._answer(
            answer_interaction.sync_detailed(
                self.org, self.playbook, request_id, client=self.api, body=body
            ),
            200,
        )
