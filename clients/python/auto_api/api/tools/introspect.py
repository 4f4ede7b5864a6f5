from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.tool_detail import ToolDetail
from typing import cast



def _get_kwargs(
    org: str,
    pb: str,
    server: str,
    tool: str,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/orgs/{org}/playbooks/{pb}/tool-servers/{server}/tools/{tool}".format(org=quote(str(org), safe=""),pb=quote(str(pb), safe=""),server=quote(str(server), safe=""),tool=quote(str(tool), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | ToolDetail:
    if response.status_code == 200:
        response_200 = ToolDetail.from_dict(response.json())



        return response_200

    response_default = Problem.from_dict(response.json())



    return response_default



def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | ToolDetail]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    org: str,
    pb: str,
    server: str,
    tool: str,
    *,
    client: AuthenticatedClient | Client,

) -> Response[Problem | ToolDetail]:
    """ Read one tool of a tool server in full, with the schema of its arguments.

     Read one tool of a tool server in full, with the schema of its arguments.

    Args:
        org (str):
        pb (str):
        server (str):
        tool (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ToolDetail]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,
server=server,
tool=tool,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    org: str,
    pb: str,
    server: str,
    tool: str,
    *,
    client: AuthenticatedClient | Client,

) -> Problem | ToolDetail | None:
    """ Read one tool of a tool server in full, with the schema of its arguments.

     Read one tool of a tool server in full, with the schema of its arguments.

    Args:
        org (str):
        pb (str):
        server (str):
        tool (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ToolDetail
     """


    return sync_detailed(
        org=org,
pb=pb,
server=server,
tool=tool,
client=client,

    ).parsed

async def asyncio_detailed(
    org: str,
    pb: str,
    server: str,
    tool: str,
    *,
    client: AuthenticatedClient | Client,

) -> Response[Problem | ToolDetail]:
    """ Read one tool of a tool server in full, with the schema of its arguments.

     Read one tool of a tool server in full, with the schema of its arguments.

    Args:
        org (str):
        pb (str):
        server (str):
        tool (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ToolDetail]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,
server=server,
tool=tool,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    org: str,
    pb: str,
    server: str,
    tool: str,
    *,
    client: AuthenticatedClient | Client,

) -> Problem | ToolDetail | None:
    """ Read one tool of a tool server in full, with the schema of its arguments.

     Read one tool of a tool server in full, with the schema of its arguments.

    Args:
        org (str):
        pb (str):
        server (str):
        tool (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ToolDetail
     """


    return (await asyncio_detailed(
        org=org,
pb=pb,
server=server,
tool=tool,
client=client,

    )).parsed
