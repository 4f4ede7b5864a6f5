from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.execute_out import ExecuteOut
from ...models.execute_tool import ExecuteTool
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    org: str,
    pb: str,
    server: str,
    tool: str,
    *,
    body: ExecuteTool,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/orgs/{org}/playbooks/{pb}/tool-servers/{server}/tools/{tool}/execute".format(org=quote(str(org), safe=""),pb=quote(str(pb), safe=""),server=quote(str(server), safe=""),tool=quote(str(tool), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ExecuteOut | Problem:
    if response.status_code == 200:
        response_200 = ExecuteOut.from_dict(response.json())



        return response_200

    response_default = Problem.from_dict(response.json())



    return response_default



def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ExecuteOut | Problem]:
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
    body: ExecuteTool,

) -> Response[ExecuteOut | Problem]:
    """ Call one tool once, as a run would, and return what the run's model would see; with dry_run, report
    what the call would check and call nothing.

     Call one tool once, as a run would, and return what the run's model would see; with dry_run, report
    what the call would check and call nothing.

    Args:
        org (str):
        pb (str):
        server (str):
        tool (str):
        body (ExecuteTool): `execute` and `dry_run`: the arguments of one call.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ExecuteOut | Problem]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,
server=server,
tool=tool,
body=body,

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
    body: ExecuteTool,

) -> ExecuteOut | Problem | None:
    """ Call one tool once, as a run would, and return what the run's model would see; with dry_run, report
    what the call would check and call nothing.

     Call one tool once, as a run would, and return what the run's model would see; with dry_run, report
    what the call would check and call nothing.

    Args:
        org (str):
        pb (str):
        server (str):
        tool (str):
        body (ExecuteTool): `execute` and `dry_run`: the arguments of one call.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ExecuteOut | Problem
     """


    return sync_detailed(
        org=org,
pb=pb,
server=server,
tool=tool,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    org: str,
    pb: str,
    server: str,
    tool: str,
    *,
    client: AuthenticatedClient | Client,
    body: ExecuteTool,

) -> Response[ExecuteOut | Problem]:
    """ Call one tool once, as a run would, and return what the run's model would see; with dry_run, report
    what the call would check and call nothing.

     Call one tool once, as a run would, and return what the run's model would see; with dry_run, report
    what the call would check and call nothing.

    Args:
        org (str):
        pb (str):
        server (str):
        tool (str):
        body (ExecuteTool): `execute` and `dry_run`: the arguments of one call.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ExecuteOut | Problem]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,
server=server,
tool=tool,
body=body,

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
    body: ExecuteTool,

) -> ExecuteOut | Problem | None:
    """ Call one tool once, as a run would, and return what the run's model would see; with dry_run, report
    what the call would check and call nothing.

     Call one tool once, as a run would, and return what the run's model would see; with dry_run, report
    what the call would check and call nothing.

    Args:
        org (str):
        pb (str):
        server (str):
        tool (str):
        body (ExecuteTool): `execute` and `dry_run`: the arguments of one call.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ExecuteOut | Problem
     """


    return (await asyncio_detailed(
        org=org,
pb=pb,
server=server,
tool=tool,
client=client,
body=body,

    )).parsed
