from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.definition_type import DefinitionType
from ...models.problem import Problem
from ...models.reason import Reason
from ...models.run_list import RunList
from ...models.run_status import RunStatus
from ...types import UNSET, Unset
from typing import cast
import datetime



def _get_kwargs(
    org: str,
    pb: str,
    *,
    type_: DefinitionType | Unset = UNSET,
    name: str | Unset = UNSET,
    status: RunStatus | Unset = UNSET,
    reason: Reason | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    json_type_: str | Unset = UNSET
    if not isinstance(type_, Unset):
        json_type_ = type_.value

    params["type"] = json_type_

    params["name"] = name

    json_status: str | Unset = UNSET
    if not isinstance(status, Unset):
        json_status = status.value

    params["status"] = json_status

    json_reason: str | Unset = UNSET
    if not isinstance(reason, Unset):
        json_reason = reason.value

    params["reason"] = json_reason

    json_since: str | Unset = UNSET
    if not isinstance(since, Unset):
        json_since = since.isoformat()
    params["since"] = json_since

    json_until: str | Unset = UNSET
    if not isinstance(until, Unset):
        json_until = until.isoformat()
    params["until"] = json_until

    params["after"] = after

    params["limit"] = limit


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/orgs/{org}/playbooks/{pb}/runs".format(org=quote(str(org), safe=""),pb=quote(str(pb), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | RunList:
    if response.status_code == 200:
        response_200 = RunList.from_dict(response.json())



        return response_200

    response_default = Problem.from_dict(response.json())



    return response_default



def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | RunList]:
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
    name: str | Unset = UNSET,
    status: RunStatus | Unset = UNSET,
    reason: Reason | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,

) -> Response[Problem | RunList]:
    """ List the playbook's runs, newest first, without input and output.

     List the playbook's runs, newest first, without input and output.

    Args:
        org (str):
        pb (str):
        type_ (DefinitionType | Unset): A definition's type.
        name (str | Unset):
        status (RunStatus | Unset): Where a run stands.
        reason (Reason | Unset): Why a run or a request was refused; failed: the server broke
            down, never a rejection the caller caused.
        since (datetime.datetime | Unset):
        until (datetime.datetime | Unset):
        after (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RunList]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,
type_=type_,
name=name,
status=status,
reason=reason,
since=since,
until=until,
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
    type_: DefinitionType | Unset = UNSET,
    name: str | Unset = UNSET,
    status: RunStatus | Unset = UNSET,
    reason: Reason | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,

) -> Problem | RunList | None:
    """ List the playbook's runs, newest first, without input and output.

     List the playbook's runs, newest first, without input and output.

    Args:
        org (str):
        pb (str):
        type_ (DefinitionType | Unset): A definition's type.
        name (str | Unset):
        status (RunStatus | Unset): Where a run stands.
        reason (Reason | Unset): Why a run or a request was refused; failed: the server broke
            down, never a rejection the caller caused.
        since (datetime.datetime | Unset):
        until (datetime.datetime | Unset):
        after (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RunList
     """


    return sync_detailed(
        org=org,
pb=pb,
client=client,
type_=type_,
name=name,
status=status,
reason=reason,
since=since,
until=until,
after=after,
limit=limit,

    ).parsed

async def asyncio_detailed(
    org: str,
    pb: str,
    *,
    client: AuthenticatedClient | Client,
    type_: DefinitionType | Unset = UNSET,
    name: str | Unset = UNSET,
    status: RunStatus | Unset = UNSET,
    reason: Reason | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,

) -> Response[Problem | RunList]:
    """ List the playbook's runs, newest first, without input and output.

     List the playbook's runs, newest first, without input and output.

    Args:
        org (str):
        pb (str):
        type_ (DefinitionType | Unset): A definition's type.
        name (str | Unset):
        status (RunStatus | Unset): Where a run stands.
        reason (Reason | Unset): Why a run or a request was refused; failed: the server broke
            down, never a rejection the caller caused.
        since (datetime.datetime | Unset):
        until (datetime.datetime | Unset):
        after (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RunList]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,
type_=type_,
name=name,
status=status,
reason=reason,
since=since,
until=until,
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
    type_: DefinitionType | Unset = UNSET,
    name: str | Unset = UNSET,
    status: RunStatus | Unset = UNSET,
    reason: Reason | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,

) -> Problem | RunList | None:
    """ List the playbook's runs, newest first, without input and output.

     List the playbook's runs, newest first, without input and output.

    Args:
        org (str):
        pb (str):
        type_ (DefinitionType | Unset): A definition's type.
        name (str | Unset):
        status (RunStatus | Unset): Where a run stands.
        reason (Reason | Unset): Why a run or a request was refused; failed: the server broke
            down, never a rejection the caller caused.
        since (datetime.datetime | Unset):
        until (datetime.datetime | Unset):
        after (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RunList
     """


    return (await asyncio_detailed(
        org=org,
pb=pb,
client=client,
type_=type_,
name=name,
status=status,
reason=reason,
since=since,
until=until,
after=after,
limit=limit,

    )).parsed
