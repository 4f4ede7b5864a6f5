from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.definition_list import DefinitionList
from ...models.definition_type import DefinitionType
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    org: str,
    pb: str,
    *,
    type_: DefinitionType | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    json_type_: str | Unset = UNSET
    if not isinstance(type_, Unset):
        json_type_ = type_.value

    params["type"] = json_type_


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/orgs/{org}/playbooks/{pb}/definitions".format(org=quote(str(org), safe=""),pb=quote(str(pb), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> DefinitionList | Problem:
    if response.status_code == 200:
        response_200 = DefinitionList.from_dict(response.json())



        return response_200

    response_default = Problem.from_dict(response.json())



    return response_default



def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[DefinitionList | Problem]:
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
    type_: DefinitionType | Unset = UNSET,

) -> Response[DefinitionList | Problem]:
    """ List the playbook's definitions, without their overviews.

     List the playbook's definitions, without their overviews.

    Args:
        org (str):
        pb (str):
        type_ (DefinitionType | Unset): A definition's type.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DefinitionList | Problem]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,
type_=type_,

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
    type_: DefinitionType | Unset = UNSET,

) -> DefinitionList | Problem | None:
    """ List the playbook's definitions, without their overviews.

     List the playbook's definitions, without their overviews.

    Args:
        org (str):
        pb (str):
        type_ (DefinitionType | Unset): A definition's type.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DefinitionList | Problem
     """


    return sync_detailed(
        org=org,
pb=pb,
client=client,
type_=type_,

    ).parsed

async def asyncio_detailed(
    org: str,
    pb: str,
    *,
    client: AuthenticatedClient | Client,
    type_: DefinitionType | Unset = UNSET,

) -> Response[DefinitionList | Problem]:
    """ List the playbook's definitions, without their overviews.

     List the playbook's definitions, without their overviews.

    Args:
        org (str):
        pb (str):
        type_ (DefinitionType | Unset): A definition's type.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DefinitionList | Problem]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,
type_=type_,

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
    type_: DefinitionType | Unset = UNSET,

) -> DefinitionList | Problem | None:
    """ List the playbook's definitions, without their overviews.

     List the playbook's definitions, without their overviews.

    Args:
        org (str):
        pb (str):
        type_ (DefinitionType | Unset): A definition's type.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DefinitionList | Problem
     """


    return (await asyncio_detailed(
        org=org,
pb=pb,
client=client,
type_=type_,

    )).parsed
