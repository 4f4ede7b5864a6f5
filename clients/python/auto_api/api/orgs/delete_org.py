from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.deleted_out import DeletedOut
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    org: str,
    *,
    force: str | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["force"] = force


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": "/v1/orgs/{org}".format(org=quote(str(org), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> DeletedOut | Problem:
    if response.status_code == 200:
        response_200 = DeletedOut.from_dict(response.json())



        return response_200

    response_default = Problem.from_dict(response.json())



    return response_default



def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[DeletedOut | Problem]:
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
    force: str | Unset = UNSET,

) -> Response[DeletedOut | Problem]:
    """ Delete an org and every playbook in it, as delete_playbook does (admins only). Refused while runs
    are started unless force is true.

     Delete an org and every playbook in it, as delete_playbook does (admins only). Refused while runs
    are started unless force is true.

    Args:
        org (str):
        force (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeletedOut | Problem]
     """


    kwargs = _get_kwargs(
        org=org,
force=force,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    org: str,
    *,
    client: AuthenticatedClient | Client,
    force: str | Unset = UNSET,

) -> DeletedOut | Problem | None:
    """ Delete an org and every playbook in it, as delete_playbook does (admins only). Refused while runs
    are started unless force is true.

     Delete an org and every playbook in it, as delete_playbook does (admins only). Refused while runs
    are started unless force is true.

    Args:
        org (str):
        force (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeletedOut | Problem
     """


    return sync_detailed(
        org=org,
client=client,
force=force,

    ).parsed

async def asyncio_detailed(
    org: str,
    *,
    client: AuthenticatedClient | Client,
    force: str | Unset = UNSET,

) -> Response[DeletedOut | Problem]:
    """ Delete an org and every playbook in it, as delete_playbook does (admins only). Refused while runs
    are started unless force is true.

     Delete an org and every playbook in it, as delete_playbook does (admins only). Refused while runs
    are started unless force is true.

    Args:
        org (str):
        force (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeletedOut | Problem]
     """


    kwargs = _get_kwargs(
        org=org,
force=force,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    org: str,
    *,
    client: AuthenticatedClient | Client,
    force: str | Unset = UNSET,

) -> DeletedOut | Problem | None:
    """ Delete an org and every playbook in it, as delete_playbook does (admins only). Refused while runs
    are started unless force is true.

     Delete an org and every playbook in it, as delete_playbook does (admins only). Refused while runs
    are started unless force is true.

    Args:
        org (str):
        force (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeletedOut | Problem
     """


    return (await asyncio_detailed(
        org=org,
client=client,
force=force,

    )).parsed
