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
from ...models.update_definition import UpdateDefinition
from typing import cast



def _get_kwargs(
    org: str,
    pb: str,
    type_: DefinitionType,
    name: str,
    *,
    body: UpdateDefinition,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "put",
        "url": "/v1/orgs/{org}/playbooks/{pb}/definitions/{type_}/{name}".format(org=quote(str(org), safe=""),pb=quote(str(pb), safe=""),type_=quote(str(type_), safe=""),name=quote(str(name), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
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
    body: UpdateDefinition,

) -> Response[DefinitionOut | Problem]:
    """ Check a changed document and save it as the next version; an update that changes nothing makes none.

     Check a changed document and save it as the next version; an update that changes nothing makes none.

    Args:
        org (str):
        pb (str):
        type_ (DefinitionType): A definition's type.
        name (str):
        body (UpdateDefinition): `update_definition`: saves the next version; an update that
            changes nothing makes none.

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
body=body,

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
    body: UpdateDefinition,

) -> DefinitionOut | Problem | None:
    """ Check a changed document and save it as the next version; an update that changes nothing makes none.

     Check a changed document and save it as the next version; an update that changes nothing makes none.

    Args:
        org (str):
        pb (str):
        type_ (DefinitionType): A definition's type.
        name (str):
        body (UpdateDefinition): `update_definition`: saves the next version; an update that
            changes nothing makes none.

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
body=body,

    ).parsed

async def asyncio_detailed(
    org: str,
    pb: str,
    type_: DefinitionType,
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: UpdateDefinition,

) -> Response[DefinitionOut | Problem]:
    """ Check a changed document and save it as the next version; an update that changes nothing makes none.

     Check a changed document and save it as the next version; an update that changes nothing makes none.

    Args:
        org (str):
        pb (str):
        type_ (DefinitionType): A definition's type.
        name (str):
        body (UpdateDefinition): `update_definition`: saves the next version; an update that
            changes nothing makes none.

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
body=body,

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
    body: UpdateDefinition,

) -> DefinitionOut | Problem | None:
    """ Check a changed document and save it as the next version; an update that changes nothing makes none.

     Check a changed document and save it as the next version; an update that changes nothing makes none.

    Args:
        org (str):
        pb (str):
        type_ (DefinitionType): A definition's type.
        name (str):
        body (UpdateDefinition): `update_definition`: saves the next version; an update that
            changes nothing makes none.

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
body=body,

    )).parsed
