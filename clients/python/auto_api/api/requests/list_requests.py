from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.request_list import RequestList
from ...models.request_status import RequestStatus
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    org: str,
    pb: str,
    *,
    status: RequestStatus | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    json_status: str | Unset = UNSET
    if not isinstance(status, Unset):
        json_status = status.value

    params["status"] = json_status

    params["after"] = after

    params["limit"] = limit


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/orgs/{org}/playbooks/{pb}/requests".format(org=quote(str(org), safe=""),pb=quote(str(pb), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | RequestList:
    if response.status_code == 200:
        response_200 = RequestList.from_dict(response.json())



        return response_200

    response_default = Problem.from_dict(response.json())



    return response_default



def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | RequestList]:
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
    status: RequestStatus | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,

) -> Response[Problem | RequestList]:
    """ List the playbook's inbox: the requests interaction functions' runs left for people, newest first.

     List the playbook's inbox: the requests interaction functions' runs left for people, newest first.

    Args:
        org (str):
        pb (str):
        status (RequestStatus | Unset): Where a request stands.
        after (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RequestList]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,
status=status,
after=after,
limit=limit,

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
    status: RequestStatus | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,

) -> Problem | RequestList | None:
    """ List the playbook's inbox: the requests interaction functions' runs left for people, newest first.

     List the playbook's inbox: the requests interaction functions' runs left for people, newest first.

    Args:
        org (str):
        pb (str):
        status (RequestStatus | Unset): Where a request stands.
        after (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RequestList
     """


    return sync_detailed(
        org=org,
pb=pb,
client=client,
status=status,
after=after,
limit=limit,

    ).parsed

async def asyncio_detailed(
    org: str,
    pb: str,
    *,
    client: AuthenticatedClient | Client,
    status: RequestStatus | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,

) -> Response[Problem | RequestList]:
    """ List the playbook's inbox: the requests interaction functions' runs left for people, newest first.

     List the playbook's inbox: the requests interaction functions' runs left for people, newest first.

    Args:
        org (str):
        pb (str):
        status (RequestStatus | Unset): Where a request stands.
        after (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RequestList]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,
status=status,
after=after,
limit=limit,

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
    status: RequestStatus | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,

) -> Problem | RequestList | None:
    """ List the playbook's inbox: the requests interaction functions' runs left for people, newest first.

     List the playbook's inbox: the requests interaction functions' runs left for people, newest first.

    Args:
        org (str):
        pb (str):
        status (RequestStatus | Unset): Where a request stands.
        after (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RequestList
     """


    return (await asyncio_detailed(
        org=org,
pb=pb,
client=client,
status=status,
after=after,
limit=limit,

    )).parsed
