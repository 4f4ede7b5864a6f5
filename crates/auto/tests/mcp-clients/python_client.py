"""The official MCP Python SDK (PyPI `mcp`) as a client of auto, driven by a Rust test.

It connects once, then answers one JSON request a line on stdin with one JSON answer a line on
stdout, so the test keeps one MCP session for a whole scenario and makes its assertions in Rust:

    python_client.py http URL [KEY]          Streamable HTTP, with KEY as the bearer key
    python_client.py stdio COMMAND [ARG...]  stdio, COMMAND started as a child process

The first line it writes is {"connected": {"server_name", "server_title", "server_version",
"protocol_version", "instructions"}}.
Requests and their answers:

    {"list_tools": {}}             -> {"tools": [{"name", "description", "read_only",
                                       "input_schema", "output_schema"}]}
    {"call": NAME, "arguments": {}} -> {"is_error", "structured_content", "texts": [...]}
    {"list_resources": {}}         -> {"resources": [Resource as MCP's JSON]}
    {"read_resource": URI}         -> {"contents": [ResourceContents as MCP's JSON]}
    {"list_prompts": {}}           -> {"prompts": [Prompt as MCP's JSON]}
    {"get_prompt": NAME, "arguments": {}} -> {"description", "messages": [PromptMessage as JSON]}

A request the SDK fails (a protocol error, a transport error) answers {"error": "..."}. It ends
when stdin closes. A connection that fails writes {"connect_error": "...", "http_statuses":
[...]} (the statuses of the HTTP answers it got, since the SDK's error does not carry them) and
exits 1. Only the SDK's client API is used: what a user of the SDK would write.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def write(answer: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()


def tool_json(tool: Any) -> dict[str, Any]:
    annotations = tool.annotations
    return {
        "name": tool.name,
        "description": tool.description,
        "read_only": None if annotations is None else annotations.read_only_hint,
        "input_schema": tool.input_schema,
        "output_schema": tool.output_schema,
    }


def as_json(model: Any) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def answer(client: Client, request: dict[str, Any]) -> dict[str, Any]:
    if "list_resources" in request:
        listed = await client.list_resources()
        return {"resources": [as_json(resource) for resource in listed.resources]}
    if "read_resource" in request:
        read = await client.read_resource(request["read_resource"])
        return {"contents": [as_json(contents) for contents in read.contents]}
    if "list_prompts" in request:
        listed = await client.list_prompts()
        return {"prompts": [as_json(prompt) for prompt in listed.prompts]}
    if "get_prompt" in request:
        prompt = await client.get_prompt(request["get_prompt"], request.get("arguments"))
        return {
            "description": prompt.description,
            "messages": [as_json(message) for message in prompt.messages],
        }
    if "list_tools" in request:
        listed = await client.list_tools()
        return {"tools": [tool_json(tool) for tool in listed.tools]}
    if "call" in request:
        result = await client.call_tool(request["call"], request.get("arguments") or {})
        return {
            "is_error": result.is_error,
            "structured_content": result.structured_content,
            "texts": [block.text for block in result.content if block.type == "text"],
        }
    return {"error": f"unknown request {request!r}"}


async def serve(client: Client) -> None:
    write(
        {
            "connected": {
                "server_name": client.server_info.name if client.server_info else None,
                "server_title": client.server_info.title if client.server_info else None,
                "instructions": client.instructions,
                "server_version": client.server_info.version if client.server_info else None,
                "protocol_version": client.protocol_version,
            }
        }
    )
    while True:
        line = await anyio.to_thread.run_sync(sys.stdin.readline)
        if not line:
            return
        try:
            write(await answer(client, json.loads(line)))
        except Exception as error:  # noqa: BLE001: every failure goes back to the test as text.
            write({"error": f"{type(error).__name__}: {error}"})


async def main(argv: list[str]) -> None:
    statuses: list[int] = []

    async def record(response: httpx2.Response) -> None:
        statuses.append(response.status_code)

    try:
        match argv:
            case ["http", url, *key]:
                headers = {"Authorization": f"Bearer {key[0]}"} if key else None
                http: httpx2.AsyncClient = create_mcp_http_client(headers=headers)
                http.event_hooks = {"response": [record]}
                async with http, Client(streamable_http_client(url, http_client=http)) as client:
                    await serve(client)
            case ["stdio", command, *args]:
                parameters = StdioServerParameters(command=command, args=args)
                async with Client(parameters) as client:
                    await serve(client)
            case _:
                sys.exit(__doc__)
    except Exception as error:  # noqa: BLE001: the test reads why it could not connect.
        write({"connect_error": f"{type(error).__name__}: {error}", "http_statuses": statuses})
        sys.exit(1)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])
