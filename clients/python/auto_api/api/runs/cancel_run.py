from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.cancel_run import CancelRun
from ...models.problem import Problem
from ...models.run_out import RunOut
from typing import cast



def _get_kwargs(
    org: str,
    pb: str,
    run_id: str,
    *,
    body: CancelRun,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/orgs/{org}/playbooks/{pb}/runs/{run_id}/cancel".format(org=quote(str(org), safe=""),pb=quote(str(pb), safe=""),run_id=quote(str(run_id), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | RunOut:
    if response.status_code == 200:
        response_200 = RunOut.from_dict(response.json())



        return response_200

    response_default = Problem.from_dict(response.json())



    return response_default



def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | RunOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    org: str,
    pb: str,
    run_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: CancelRun,

) -> Response[Problem | RunOut]:
    """ Cancel a run that has not ended.

     Cancel a run that has not ended.

    Args:
        org (str):
        pb (str):
        run_id (str):
        body (CancelRun): `cancel_run`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RunOut]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,
run_id=run_id,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    org: str,
    pb: str,
    run_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: CancelRun,

) -> Problem | RunOut | None:
    """ Cancel a run that has not ended.

     Cancel a run that has not ended.

    Args:
        org (str):
        pb (str):
        run_id (str):
        body (CancelRun): `cancel_run`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RunOut
     """


    return sync_detailed(
        org=org,
pb=pb,
run_id=run_id,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    org: str,
    pb: str,
    run_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: CancelRun,

) -> Response[Problem | RunOut]:
    """ Cancel a run that has not ended.

     Cancel a run that has not ended.

    Args:
        org (str):
        pb (str):
        run_id (str):
        body (CancelRun): `cancel_run`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RunOut]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,
run_id=run_id,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    org: str,
    pb: str,
    run_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: CancelRun,

) -> Problem | RunOut | None:
    """ Cancel a run that has not ended.

     Cancel a run that has not ended.

    Args:
        org (str):
        pb (str):
        run_id (str):
        body (CancelRun): `cancel_run`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RunOut
     """


    return (await asyncio_detailed(
        org=org,
pb=pb,
run_id=run_id,
client=client,
body=body,

    )).parsed
