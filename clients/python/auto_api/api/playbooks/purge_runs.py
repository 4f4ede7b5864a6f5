from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.purge_out import PurgeOut
from ...models.purge_runs import PurgeRuns
from typing import cast



def _get_kwargs(
    org: str,
    pb: str,
    *,
    body: PurgeRuns,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/orgs/{org}/playbooks/{pb}/purge".format(org=quote(str(org), safe=""),pb=quote(str(pb), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | PurgeOut:
    if response.status_code == 200:
        response_200 = PurgeOut.from_dict(response.json())



        return response_200

    response_default = Problem.from_dict(response.json())



    return response_default



def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | PurgeOut]:
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
    body: PurgeRuns,

) -> Response[Problem | PurgeOut]:
    """ Remove the playbook's runs that ended before a past time, with their events (admins only). Runs that
    are still needed stay: started ones, children of started runs, and runs with events a recall view,
    event trigger or listening task has not read. Purged seqs are holes in the log, never reused.

     Remove the playbook's runs that ended before a past time, with their events (admins only). Runs that
    are still needed stay: started ones, children of started runs, and runs with events a recall view,
    event trigger or listening task has not read. Purged seqs are holes in the log, never reused.

    Args:
        org (str):
        pb (str):
        body (PurgeRuns): `POST /v1/orgs/{org}/playbooks/{pb}/purge`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | PurgeOut]
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
    body: PurgeRuns,

) -> Problem | PurgeOut | None:
    """ Remove the playbook's runs that ended before a past time, with their events (admins only). Runs that
    are still needed stay: started ones, children of started runs, and runs with events a recall view,
    event trigger or listening task has not read. Purged seqs are holes in the log, never reused.

     Remove the playbook's runs that ended before a past time, with their events (admins only). Runs that
    are still needed stay: started ones, children of started runs, and runs with events a recall view,
    event trigger or listening task has not read. Purged seqs are holes in the log, never reused.

    Args:
        org (str):
        pb (str):
        body (PurgeRuns): `POST /v1/orgs/{org}/playbooks/{pb}/purge`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | PurgeOut
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
    body: PurgeRuns,

) -> Response[Problem | PurgeOut]:
    """ Remove the playbook's runs that ended before a past time, with their events (admins only). Runs that
    are still needed stay: started ones, children of started runs, and runs with events a recall view,
    event trigger or listening task has not read. Purged seqs are holes in the log, never reused.

     Remove the playbook's runs that ended before a past time, with their events (admins only). Runs that
    are still needed stay: started ones, children of started runs, and runs with events a recall view,
    event trigger or listening task has not read. Purged seqs are holes in the log, never reused.

    Args:
        org (str):
        pb (str):
        body (PurgeRuns): `POST /v1/orgs/{org}/playbooks/{pb}/purge`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | PurgeOut]
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
    body: PurgeRuns,

) -> Problem | PurgeOut | None:
    """ Remove the playbook's runs that ended before a past time, with their events (admins only). Runs that
    are still needed stay: started ones, children of started runs, and runs with events a recall view,
    event trigger or listening task has not read. Purged seqs are holes in the log, never reused.

     Remove the playbook's runs that ended before a past time, with their events (admins only). Runs that
    are still needed stay: started ones, children of started runs, and runs with events a recall view,
    event trigger or listening task has not read. Purged seqs are holes in the log, never reused.

    Args:
        org (str):
        pb (str):
        body (PurgeRuns): `POST /v1/orgs/{org}/playbooks/{pb}/purge`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | PurgeOut
     """


    return (await asyncio_detailed(
        org=org,
pb=pb,
client=client,
body=body,

    )).parsed
