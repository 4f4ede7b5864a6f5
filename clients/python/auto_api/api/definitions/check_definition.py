from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.create_definition import CreateDefinition
from ...models.definition_check import DefinitionCheck
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    org: str,
    pb: str,
    *,
    body: CreateDefinition,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/orgs/{org}/playbooks/{pb}/definitions/check".format(org=quote(str(org), safe=""),pb=quote(str(pb), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> DefinitionCheck | Problem:
    if response.status_code == 200:
        response_200 = DefinitionCheck.from_dict(response.json())



        return response_200

    response_default = Problem.from_dict(response.json())



    return response_default



def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[DefinitionCheck | Problem]:
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
    body: CreateDefinition,

) -> Response[DefinitionCheck | Problem]:
    """ Check a definition as create_definition would and save nothing: its issues by line, or the warnings
    and schemas it would be saved with.

     Check a definition as create_definition would and save nothing: its issues by line, or the warnings
    and schemas it would be saved with.

    Args:
        org (str):
        pb (str):
        body (CreateDefinition): `create_definition`: saves version 1 of a new definition.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DefinitionCheck | Problem]
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
    body: CreateDefinition,

) -> DefinitionCheck | Problem | None:
    """ Check a definition as create_definition would and save nothing: its issues by line, or the warnings
    and schemas it would be saved with.

     Check a definition as create_definition would and save nothing: its issues by line, or the warnings
    and schemas it would be saved with.

    Args:
        org (str):
        pb (str):
        body (CreateDefinition): `create_definition`: saves version 1 of a new definition.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DefinitionCheck | Problem
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
    body: CreateDefinition,

) -> Response[DefinitionCheck | Problem]:
    """ Check a definition as create_definition would and save nothing: its issues by line, or the warnings
    and schemas it would be saved with.

     Check a definition as create_definition would and save nothing: its issues by line, or the warnings
    and schemas it would be saved with.

    Args:
        org (str):
        pb (str):
        body (CreateDefinition): `create_definition`: saves version 1 of a new definition.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DefinitionCheck | Problem]
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
    body: CreateDefinition,

) -> DefinitionCheck | Problem | None:
    """ Check a definition as create_definition would and save nothing: its issues by line, or the warnings
    and schemas it would be saved with.

     Check a definition as create_definition would and save nothing: its issues by line, or the warnings
    and schemas it would be saved with.

    Args:
        org (str):
        pb (str):
        body (CreateDefinition): `create_definition`: saves version 1 of a new definition.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DefinitionCheck | Problem
     """


    return (await asyncio_detailed(
        org=org,
pb=pb,
client=client,
body=body,

    )).parsed
