from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.event_in import EventIn
from ...models.problem import Problem
from ...models.run_event_out import RunEventOut
from typing import cast



def _get_kwargs(
    org: str,
    pb: str,
    run_id: str,
    *,
    body: EventIn,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/orgs/{org}/playbooks/{pb}/runs/{run_id}/events".format(org=quote(str(org), safe=""),pb=quote(str(pb), safe=""),run_id=quote(str(run_id), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | RunEventOut:
    if response.status_code == 202:
        response_202 = RunEventOut.from_dict(response.json())



        return response_202

    response_default = Problem.from_dict(response.json())



    return response_default



def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | RunEventOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    org: str,
    pb: str,
    run_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: EventIn,

) -> Response[Problem | RunEventOut]:
    """ Send a CloudEvents event to a workflow run, kept until one of its listen tasks takes it: 202, also
    for an id the run received before.

     Send a CloudEvents event to a workflow run, kept until one of its listen tasks takes it: 202, also
    for an id the run received before.

    Args:
        org (str):
        pb (str):
        run_id (str):
        body (EventIn): A CloudEvents 1.0 event in JSON. `type` is required; `id` is a new one
            when left out and `source` `/callers/<caller>`; extension attributes (lowercase letters
            and digits) may be added beside them.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RunEventOut]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,
run_id=run_id,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    org: str,
    pb: str,
    run_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: EventIn,

) -> Problem | RunEventOut | None:
    """ Send a CloudEvents event to a workflow run, kept until one of its listen tasks takes it: 202, also
    for an id the run received before.

     Send a CloudEvents event to a workflow run, kept until one of its listen tasks takes it: 202, also
    for an id the run received before.

    Args:
        org (str):
        pb (str):
        run_id (str):
        body (EventIn): A CloudEvents 1.0 event in JSON. `type` is required; `id` is a new one
            when left out and `source` `/callers/<caller>`; extension attributes (lowercase letters
            and digits) may be added beside them.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RunEventOut
     """


    return sync_detailed(
        org=org,
pb=pb,
run_id=run_id,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    org: str,
    pb: str,
    run_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: EventIn,

) -> Response[Problem | RunEventOut]:
    """ Send a CloudEvents event to a workflow run, kept until one of its listen tasks takes it: 202, also
    for an id the run received before.

     Send a CloudEvents event to a workflow run, kept until one of its listen tasks takes it: 202, also
    for an id the run received before.

    Args:
        org (str):
        pb (str):
        run_id (str):
        body (EventIn): A CloudEvents 1.0 event in JSON. `type` is required; `id` is a new one
            when left out and `source` `/callers/<caller>`; extension attributes (lowercase letters
            and digits) may be added beside them.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RunEventOut]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,
run_id=run_id,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    org: str,
    pb: str,
    run_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: EventIn,

) -> Problem | RunEventOut | None:
    """ Send a CloudEvents event to a workflow run, kept until one of its listen tasks takes it: 202, also
    for an id the run received before.

     Send a CloudEvents event to a workflow run, kept until one of its listen tasks takes it: 202, also
    for an id the run received before.

    Args:
        org (str):
        pb (str):
        run_id (str):
        body (EventIn): A CloudEvents 1.0 event in JSON. `type` is required; `id` is a new one
            when left out and `source` `/callers/<caller>`; extension attributes (lowercase letters
            and digits) may be added beside them.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RunEventOut
     """


    return (await asyncio_detailed(
        org=org,
pb=pb,
run_id=run_id,
client=client,
body=body,

    )).parsed
