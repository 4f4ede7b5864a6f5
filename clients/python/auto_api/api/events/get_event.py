from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.event_out import EventOut
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    org: str,
    pb: str,
    event_id: str,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/orgs/{org}/playbooks/{pb}/events/{event_id}".format(org=quote(str(org), safe=""),pb=quote(str(pb), safe=""),event_id=quote(str(event_id), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> EventOut | Problem:
    if response.status_code == 200:
        response_200 = EventOut.from_dict(response.json())



        return response_200

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
    event_id: str,
    *,
    client: AuthenticatedClient | Client,

) -> Response[EventOut | Problem]:
    """ Read one event in full.

     Read one event in full.

    Args:
        org (str):
        pb (str):
        event_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EventOut | Problem]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,
event_id=event_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    org: str,
    pb: str,
    event_id: str,
    *,
    client: AuthenticatedClient | Client,

) -> EventOut | Problem | None:
    """ Read one event in full.

     Read one event in full.

    Args:
        org (str):
        pb (str):
        event_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EventOut | Problem
     """


    return sync_detailed(
        org=org,
pb=pb,
event_id=event_id,
client=client,

    ).parsed

async def asyncio_detailed(
    org: str,
    pb: str,
    event_id: str,
    *,
    client: AuthenticatedClient | Client,

) -> Response[EventOut | Problem]:
    """ Read one event in full.

     Read one event in full.

    Args:
        org (str):
        pb (str):
        event_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EventOut | Problem]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,
event_id=event_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    org: str,
    pb: str,
    event_id: str,
    *,
    client: AuthenticatedClient | Client,

) -> EventOut | Problem | None:
    """ Read one event in full.

     Read one event in full.

    Args:
        org (str):
        pb (str):
        event_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EventOut | Problem
     """


    return (await asyncio_detailed(
        org=org,
pb=pb,
event_id=event_id,
client=client,

    )).parsed
