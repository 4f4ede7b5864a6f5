from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.event_in import EventIn
from ...models.event_out import EventOut
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    org: str,
    pb: str,
    *,
    body: EventIn,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/orgs/{org}/playbooks/{pb}/events".format(org=quote(str(org), safe=""),pb=quote(str(pb), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> EventOut | Problem:
    if response.status_code == 201:
        response_201 = EventOut.from_dict(response.json())



        return response_201

    response_default = Problem.from_dict(response.json())



    return response_default



def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[EventOut | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    org: str,
    pb: str,
    *,
    client: AuthenticatedClient | Client,
    body: EventIn,

) -> Response[EventOut | Problem]:
    """ Publish a CloudEvents event to the playbook.

     Publish a CloudEvents event to the playbook.

    Args:
        org (str):
        pb (str):
        body (EventIn): A CloudEvents 1.0 event in JSON. `type` is required; `id` is a new one
            when left out and `source` `/callers/<caller>`; extension attributes (lowercase letters
            and digits) may be added beside them.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EventOut | Problem]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    org: str,
    pb: str,
    *,
    client: AuthenticatedClient | Client,
    body: EventIn,

) -> EventOut | Problem | None:
    """ Publish a CloudEvents event to the playbook.

     Publish a CloudEvents event to the playbook.

    Args:
        org (str):
        pb (str):
        body (EventIn): A CloudEvents 1.0 event in JSON. `type` is required; `id` is a new one
            when left out and `source` `/callers/<caller>`; extension attributes (lowercase letters
            and digits) may be added beside them.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EventOut | Problem
     """


    return sync_detailed(
        org=org,
pb=pb,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    org: str,
    pb: str,
    *,
    client: AuthenticatedClient | Client,
    body: EventIn,

) -> Response[EventOut | Problem]:
    """ Publish a CloudEvents event to the playbook.

     Publish a CloudEvents event to the playbook.

    Args:
        org (str):
        pb (str):
        body (EventIn): A CloudEvents 1.0 event in JSON. `type` is required; `id` is a new one
            when left out and `source` `/callers/<caller>`; extension attributes (lowercase letters
            and digits) may be added beside them.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EventOut | Problem]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    org: str,
    pb: str,
    *,
    client: AuthenticatedClient | Client,
    body: EventIn,

) -> EventOut | Problem | None:
    """ Publish a CloudEvents event to the playbook.

     Publish a CloudEvents event to the playbook.

    Args:
        org (str):
        pb (str):
        body (EventIn): A CloudEvents 1.0 event in JSON. `type` is required; `id` is a new one
            when left out and `source` `/callers/<caller>`; extension attributes (lowercase letters
            and digits) may be added beside them.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EventOut | Problem
     """


    return (await asyncio_detailed(
        org=org,
pb=pb,
client=client,
body=body,

    )).parsed
