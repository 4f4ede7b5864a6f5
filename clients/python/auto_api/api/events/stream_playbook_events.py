from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    org: str,
    pb: str,
    *,
    run_id: str | Unset = UNSET,
    type_: str | Unset = UNSET,
    after: str | Unset = UNSET,
    last_event_id: str | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(last_event_id, Unset):
        headers["Last-Event-ID"] = last_event_id



    

    params: dict[str, Any] = {}

    params["run_id"] = run_id

    params["type"] = type_

    params["after"] = after


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/orgs/{org}/playbooks/{pb}/events/stream".format(org=quote(str(org), safe=""),pb=quote(str(pb), safe=""),),
        "params": params,
    }


    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | str:
    if response.status_code == 200:
        response_200 = response.text
        return response_200

    response_default = Problem.from_dict(response.json())



    return response_default



def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | str]:
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
    run_id: str | Unset = UNSET,
    type_: str | Unset = UNSET,
    after: str | Unset = UNSET,
    last_event_id: str | Unset = UNSET,

) -> Response[Problem | str]:
    """ Follow the playbook's log as server-sent events: each message's id is the event's seq, its event the
    event's type, its data the event as list_playbook_events shows it; resumable with Last-Event-ID;
    ends when the server stops.

     Follow the playbook's log as server-sent events: each message's id is the event's seq, its event the
    event's type, its data the event as list_playbook_events shows it; resumable with Last-Event-ID;
    ends when the server stops.

    Args:
        org (str):
        pb (str):
        run_id (str | Unset):
        type_ (str | Unset):
        after (str | Unset):
        last_event_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,
run_id=run_id,
type_=type_,
after=after,
last_event_id=last_event_id,

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
    run_id: str | Unset = UNSET,
    type_: str | Unset = UNSET,
    after: str | Unset = UNSET,
    last_event_id: str | Unset = UNSET,

) -> Problem | str | None:
    """ Follow the playbook's log as server-sent events: each message's id is the event's seq, its event the
    event's type, its data the event as list_playbook_events shows it; resumable with Last-Event-ID;
    ends when the server stops.

     Follow the playbook's log as server-sent events: each message's id is the event's seq, its event the
    event's type, its data the event as list_playbook_events shows it; resumable with Last-Event-ID;
    ends when the server stops.

    Args:
        org (str):
        pb (str):
        run_id (str | Unset):
        type_ (str | Unset):
        after (str | Unset):
        last_event_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
     """


    return sync_detailed(
        org=org,
pb=pb,
client=client,
run_id=run_id,
type_=type_,
after=after,
last_event_id=last_event_id,

    ).parsed

async def asyncio_detailed(
    org: str,
    pb: str,
    *,
    client: AuthenticatedClient | Client,
    run_id: str | Unset = UNSET,
    type_: str | Unset = UNSET,
    after: str | Unset = UNSET,
    last_event_id: str | Unset = UNSET,

) -> Response[Problem | str]:
    """ Follow the playbook's log as server-sent events: each message's id is the event's seq, its event the
    event's type, its data the event as list_playbook_events shows it; resumable with Last-Event-ID;
    ends when the server stops.

     Follow the playbook's log as server-sent events: each message's id is the event's seq, its event the
    event's type, its data the event as list_playbook_events shows it; resumable with Last-Event-ID;
    ends when the server stops.

    Args:
        org (str):
        pb (str):
        run_id (str | Unset):
        type_ (str | Unset):
        after (str | Unset):
        last_event_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,
run_id=run_id,
type_=type_,
after=after,
last_event_id=last_event_id,

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
    run_id: str | Unset = UNSET,
    type_: str | Unset = UNSET,
    after: str | Unset = UNSET,
    last_event_id: str | Unset = UNSET,

) -> Problem | str | None:
    """ Follow the playbook's log as server-sent events: each message's id is the event's seq, its event the
    event's type, its data the event as list_playbook_events shows it; resumable with Last-Event-ID;
    ends when the server stops.

     Follow the playbook's log as server-sent events: each message's id is the event's seq, its event the
    event's type, its data the event as list_playbook_events shows it; resumable with Last-Event-ID;
    ends when the server stops.

    Args:
        org (str):
        pb (str):
        run_id (str | Unset):
        type_ (str | Unset):
        after (str | Unset):
        last_event_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
     """


    return (await asyncio_detailed(
        org=org,
pb=pb,
client=client,
run_id=run_id,
type_=type_,
after=after,
last_event_id=last_event_id,

    )).parsed
