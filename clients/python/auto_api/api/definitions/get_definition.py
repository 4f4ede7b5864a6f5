from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.definition_out import DefinitionOut
from ...models.definition_type import DefinitionType
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    org: str,
    pb: str,
    type_: DefinitionType,
    name: str,
    *,
    version: int | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["version"] = version


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/orgs/{org}/playbooks/{pb}/definitions/{type_}/{name}".format(org=quote(str(org), safe=""),pb=quote(str(pb), safe=""),type_=quote(str(type_), safe=""),name=quote(str(name), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> DefinitionOut | Problem:
    if response.status_code == 200:
        response_200 = DefinitionOut.from_dict(response.json())



        return response_200

    response_default = Problem.from_dict(response.json())



    return response_default



def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[DefinitionOut | Problem]:
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
    version: int | Unset = UNSET,

) -> Response[DefinitionOut | Problem]:
    """ Read a definition's latest version, or the version asked for, with its overview.

     Read a definition's latest version, or the version asked for, with its overview.

    Args:
        org (str):
        pb (str):
        type_ (DefinitionType): A definition's type.
        name (str):
        version (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DefinitionOut | Problem]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,
type_=type_,
name=name,
version=version,

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
    version: int | Unset = UNSET,

) -> DefinitionOut | Problem | None:
    """ Read a definition's latest version, or the version asked for, with its overview.

     Read a definition's latest version, or the version asked for, with its overview.

    Args:
        org (str):
        pb (str):
        type_ (DefinitionType): A definition's type.
        name (str):
        version (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DefinitionOut | Problem
     """


    return sync_detailed(
        org=org,
pb=pb,
type_=type_,
name=name,
client=client,
version=version,

    ).parsed

async def asyncio_detailed(
    org: str,
    pb: str,
    type_: DefinitionType,
    name: str,
    *,
    client: AuthenticatedClient | Client,
    version: int | Unset = UNSET,

) -> Response[DefinitionOut | Problem]:
    """ Read a definition's latest version, or the version asked for, with its overview.

     Read a definition's latest version, or the version asked for, with its overview.

    Args:
        org (str):
        pb (str):
        type_ (DefinitionType): A definition's type.
        name (str):
        version (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DefinitionOut | Problem]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,
type_=type_,
name=name,
version=version,

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
    version: int | Unset = UNSET,

) -> DefinitionOut | Problem | None:
    """ Read a definition's latest version, or the version asked for, with its overview.

     Read a definition's latest version, or the version asked for, with its overview.

    Args:
        org (str):
        pb (str):
        type_ (DefinitionType): A definition's type.
        name (str):
        version (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DefinitionOut | Problem
     """


    return (await asyncio_detailed(
        org=org,
pb=pb,
type_=type_,
name=name,
client=client,
version=version,

    )).parsed
