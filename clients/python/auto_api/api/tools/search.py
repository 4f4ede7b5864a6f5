from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.tool_server_list import ToolServerList
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    org: str,
    pb: str,
    *,
    terms: str | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["terms"] = terms


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/orgs/{org}/playbooks/{pb}/tool-servers/search".format(org=quote(str(org), safe=""),pb=quote(str(pb), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | ToolServerList:
    if response.status_code == 200:
        response_200 = ToolServerList.from_dict(response.json())



        return response_200

    response_default = Problem.from_dict(response.json())



    return response_default



def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | ToolServerList]:
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
    terms: str | Unset = UNSET,

) -> Response[Problem | ToolServerList]:
    """ List the tool servers set up for the playbook with the tools the operator allows on each, ranked by
    terms.

     List the tool servers set up for the playbook with the tools the operator allows on each, ranked by
    terms.

    Args:
        org (str):
        pb (str):
        terms (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ToolServerList]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,
terms=terms,

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
    terms: str | Unset = UNSET,

) -> Problem | ToolServerList | None:
    """ List the tool servers set up for the playbook with the tools the operator allows on each, ranked by
    terms.

     List the tool servers set up for the playbook with the tools the operator allows on each, ranked by
    terms.

    Args:
        org (str):
        pb (str):
        terms (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ToolServerList
     """


    return sync_detailed(
        org=org,
pb=pb,
client=client,
terms=terms,

    ).parsed

async def asyncio_detailed(
    org: str,
    pb: str,
    *,
    client: AuthenticatedClient | Client,
    terms: str | Unset = UNSET,

) -> Response[Problem | ToolServerList]:
    """ List the tool servers set up for the playbook with the tools the operator allows on each, ranked by
    terms.

     List the tool servers set up for the playbook with the tools the operator allows on each, ranked by
    terms.

    Args:
        org (str):
        pb (str):
        terms (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ToolServerList]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,
terms=terms,

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
    terms: str | Unset = UNSET,

) -> Problem | ToolServerList | None:
    """ List the tool servers set up for the playbook with the tools the operator allows on each, ranked by
    terms.

     List the tool servers set up for the playbook with the tools the operator allows on each, ranked by
    terms.

    Args:
        org (str):
        pb (str):
        terms (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ToolServerList
     """


    return (await asyncio_detailed(
        org=org,
pb=pb,
client=client,
terms=terms,

    )).parsed
