from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.playbook_out import PlaybookOut
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    org: str,
    pb: str,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/orgs/{org}/playbooks/{pb}".format(org=quote(str(org), safe=""),pb=quote(str(pb), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> PlaybookOut | Problem:
    if response.status_code == 200:
        response_200 = PlaybookOut.from_dict(response.json())



        return response_200

    response_default = Problem.from_dict(response.json())



    return response_default



def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[PlaybookOut | Problem]:
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

) -> Response[PlaybookOut | Problem]:
    """ Read a playbook.

     Read a playbook.

    Args:
        org (str):
        pb (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PlaybookOut | Problem]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,

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

) -> PlaybookOut | Problem | None:
    """ Read a playbook.

     Read a playbook.

    Args:
        org (str):
        pb (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PlaybookOut | Problem
     """


    return sync_detailed(
        org=org,
pb=pb,
client=client,

    ).parsed

async def asyncio_detailed(
    org: str,
    pb: str,
    *,
    client: AuthenticatedClient | Client,

) -> Response[PlaybookOut | Problem]:
    """ Read a playbook.

     Read a playbook.

    Args:
        org (str):
        pb (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PlaybookOut | Problem]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,

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

) -> PlaybookOut | Problem | None:
    """ Read a playbook.

     Read a playbook.

    Args:
        org (str):
        pb (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PlaybookOut | Problem
     """


    return (await asyncio_detailed(
        org=org,
pb=pb,
client=client,

    )).parsed
