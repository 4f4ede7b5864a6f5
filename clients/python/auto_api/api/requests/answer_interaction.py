from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.answer_interaction import AnswerInteraction
from ...models.problem import Problem
from ...models.request_out import RequestOut
from typing import cast



def _get_kwargs(
    org: str,
    pb: str,
    request_id: str,
    *,
    body: AnswerInteraction,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/orgs/{org}/playbooks/{pb}/requests/{request_id}/answer".format(org=quote(str(org), safe=""),pb=quote(str(pb), safe=""),request_id=quote(str(request_id), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | RequestOut:
    if response.status_code == 200:
        response_200 = RequestOut.from_dict(response.json())



        return response_200

    response_default = Problem.from_dict(response.json())



    return response_default



def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | RequestOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    org: str,
    pb: str,
    request_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: AnswerInteraction,

) -> Response[Problem | RequestOut]:
    """ Answer an open request: an answer that matches its output_schema ends its run succeeded with the
    answer as output.

     Answer an open request: an answer that matches its output_schema ends its run succeeded with the
    answer as output.

    Args:
        org (str):
        pb (str):
        request_id (str):
        body (AnswerInteraction): `answer_interaction`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RequestOut]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,
request_id=request_id,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    org: str,
    pb: str,
    request_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: AnswerInteraction,

) -> Problem | RequestOut | None:
    """ Answer an open request: an answer that matches its output_schema ends its run succeeded with the
    answer as output.

     Answer an open request: an answer that matches its output_schema ends its run succeeded with the
    answer as output.

    Args:
        org (str):
        pb (str):
        request_id (str):
        body (AnswerInteraction): `answer_interaction`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RequestOut
     """


    return sync_detailed(
        org=org,
pb=pb,
request_id=request_id,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    org: str,
    pb: str,
    request_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: AnswerInteraction,

) -> Response[Problem | RequestOut]:
    """ Answer an open request: an answer that matches its output_schema ends its run succeeded with the
    answer as output.

     Answer an open request: an answer that matches its output_schema ends its run succeeded with the
    answer as output.

    Args:
        org (str):
        pb (str):
        request_id (str):
        body (AnswerInteraction): `answer_interaction`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RequestOut]
     """


    kwargs = _get_kwargs(
        org=org,
pb=pb,
request_id=request_id,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    org: str,
    pb: str,
    request_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: AnswerInteraction,

) -> Problem | RequestOut | None:
    """ Answer an open request: an answer that matches its output_schema ends its run succeeded with the
    answer as output.

     Answer an open request: an answer that matches its output_schema ends its run succeeded with the
    answer as output.

    Args:
        org (str):
        pb (str):
        request_id (str):
        body (AnswerInteraction): `answer_interaction`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RequestOut
     """


    return (await asyncio_detailed(
        org=org,
pb=pb,
request_id=request_id,
client=client,
body=body,

    )).parsed
