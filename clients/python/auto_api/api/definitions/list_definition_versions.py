from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.definition_type import DefinitionType
from ...models.definition_versions import DefinitionVersions
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    org: str,
    pb: str,
    type_: DefinitionType,
    name: str,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/orgs/{org}/playbooks/{pb}/definitions/{type_}/{name}/versions".format(org=quote(str(org), safe=""),pb=quote(str(pb), safe=""),type_=quote(str(type_), safe=""),name=quote(str(name), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> DefinitionVersions | Problem:
    if response.status_code == 200:
        response_200 = DefinitionVersions.from_dict(response.json())



        return response_200

    response_default = Problem.from_dict(response.json())



    return response_default



def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[DefinitionVersions | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    org: str,
    pb: str,
    type_: DefinitionType,
    name: str,
    *,
    client: AuthenticatedClient | Client,

) -> Response[DefinitionVersions | Problem]:
    """ List every saved version of a definition, oldest first, each with its document and overview.

     List every saved version of a definition, oldest first, each with its document and overview.

    Args:
        org (str):
        pb (str):
        type_ (DefinitionType): A definition's type.
        name (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DefinitionVersions | Problem]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,
type_=type_,
name=name,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    org: str,
    pb: str,
    type_: DefinitionType,
    name: str,
    *,
    client: AuthenticatedClient | Client,

) -> DefinitionVersions | Problem | None:
    """ List every saved version of a definition, oldest first, each with its document and overview.

     List every saved version of a definition, oldest first, each with its document and overview.

    Args:
        org (str):
        pb (str):
        type_ (DefinitionType): A definition's type.
        name (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DefinitionVersions | Problem
     """


    return sync_detailed(
        org=org,
pb=pb,
type_=type_,
name=name,
client=client,

    ).parsed

async def asyncio_detailed(
    org: str,
    pb: str,
    type_: DefinitionType,
    name: str,
    *,
    client: AuthenticatedClient | Client,

) -> Response[DefinitionVersions | Problem]:
    """ List every saved version of a definition, oldest first, each with its document and overview.

     List every saved version of a definition, oldest first, each with its document and overview.

    Args:
        org (str):
        pb (str):
        type_ (DefinitionType): A definition's type.
        name (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DefinitionVersions | Problem]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,
type_=type_,
name=name,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    org: str,
    pb: str,
    type_: DefinitionType,
    name: str,
    *,
    client: AuthenticatedClient | Client,

) -> DefinitionVersions | Problem | None:
    """ List every saved version of a definition, oldest first, each with its document and overview.

     List every saved version of a definition, oldest first, each with its document and overview.

    Args:
        org (str):
        pb (str):
        type_ (DefinitionType): A definition's type.
        name (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DefinitionVersions | Problem
     """


    return (await asyncio_detailed(
        org=org,
pb=pb,
type_=type_,
name=name,
client=client,

    )).parsed
