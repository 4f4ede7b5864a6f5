from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.create_playbook import CreatePlaybook
from ...models.playbook_out import PlaybookOut
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    org: str,
    *,
    body: CreatePlaybook,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/orgs/{org}/playbooks".format(org=quote(str(org), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> PlaybookOut | Problem:
    if response.status_code == 201:
        response_201 = PlaybookOut.from_dict(response.json())



        return response_201

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
    *,
    client: AuthenticatedClient | Client,
    body: CreatePlaybook,

) -> Response[PlaybookOut | Problem]:
    """ Create a playbook in an org.

     Create a playbook in an org.

    Args:
        org (str):
        body (CreatePlaybook): `POST /v1/orgs/{org}/playbooks`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PlaybookOut | Problem]
     """


    kwargs = _get_kwargs(
        org=org,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    org: str,
    *,
    client: AuthenticatedClient | Client,
    body: CreatePlaybook,

) -> PlaybookOut | Problem | None:
    """ Create a playbook in an org.

     Create a playbook in an org.

    Args:
        org (str):
        body (CreatePlaybook): `POST /v1/orgs/{org}/playbooks`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PlaybookOut | Problem
     """


    return sync_detailed(
        org=org,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    org: str,
    *,
    client: AuthenticatedClient | Client,
    body: CreatePlaybook,

) -> Response[PlaybookOut | Problem]:
    """ Create a playbook in an org.

     Create a playbook in an org.

    Args:
        org (str):
        body (CreatePlaybook): `POST /v1/orgs/{org}/playbooks`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PlaybookOut | Problem]
     """


    kwargs = _get_kwargs(
        org=org,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    org: str,
    *,
    client: AuthenticatedClient | Client,
    body: CreatePlaybook,

) -> PlaybookOut | Problem | None:
    """ Create a playbook in an org.

     Create a playbook in an org.

    Args:
        org (str):
        body (CreatePlaybook): `POST /v1/orgs/{org}/playbooks`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PlaybookOut | Problem
     """


    return (await asyncio_detailed(
        org=org,
client=client,
body=body,

    )).parsed
