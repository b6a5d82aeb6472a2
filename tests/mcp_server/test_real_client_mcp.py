"""corral's MCP server under real clients: raw JSON-RPC lines over the stdio of the real
`corral mcp-server` (garbage included), protocol versions older and newer than the server's,
and the official client cancelling a long wait."""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp.shared.message import SessionMessage

from corral.agents import CorralConfig, ServiceConfig
from corral.orchestrator.mcp_server import McpServerOptions, open_mcp_server, server_policy

from ..e2e._cli import corral_argv, corral_env
from ..service._harness import Gate
from ._harness import WAIT, answer, fanout_args, open_served

pytestmark = pytest.mark.anyio

HELLO: dict[str, Any] = {"capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
INITIALIZE: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "initialize"}


class Lines:
    """JSON-RPC over a `corral mcp-server` process's stdin and stdout, one line each way."""

    def __init__(self, process: Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self._stdin = process.stdin
        self._stdout = BufferedByteReceiveStream(process.stdout)

    async def send(self, line: str | dict[str, Any]) -> None:
        text = line if isinstance(line, str) else json.dumps(line)
        await self._stdin.send(text.encode() + b"\n")

    async def receive(self) -> dict[str, Any]:
        with anyio.fail_after(WAIT):
            found: dict[str, Any] = json.loads(await self._stdout.receive_until(b"\n", 1 << 20))
        return found


@asynccontextmanager
async def stdio_server(tmp_path: Path) -> AsyncIterator[Lines]:
    async with stdio_process(tmp_path) as (lines, _):
        yield lines


@asynccontextmanager
async def stdio_process(tmp_path: Path) -> AsyncIterator[tuple[Lines, Process]]:
    """A `corral mcp-server` process after the handshake; its stdin is closed at the end."""
    env = corral_env(tmp_path / "home", "http://127.0.0.1:9/v1")
    process = await anyio.open_process(
        corral_argv("mcp-server"), env=env, cwd=tmp_path, stderr=subprocess.DEVNULL
    )
    try:
        lines = Lines(process)
        await lines.send({**INITIALIZE, "params": {**HELLO, "protocolVersion": "2025-06-18"}})
        assert "result" in await lines.receive()
        await lines.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        yield lines, process
    finally:
        assert process.stdin is not None
        await process.stdin.aclose()  # how a stdio client says it is done
        with anyio.move_on_after(WAIT, shield=True):
            await process.wait()
        await process.aclose()


GARBAGE: list[tuple[str, int, int | str | None]] = [
    ("this is not json", -32700, None),
    ('{"jsonrpc": "2.0", "id": 7, "method": "ping"', -32700, None),
    ("\x00\x01", -32700, None),
    ('{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": "str"}', -32600, 8),
    ('{"id": "nine", "method": "ping"}', -32600, "nine"),
    ('[{"jsonrpc": "2.0", "id": 10, "method": "ping"}]', -32600, None),
    ("42", -32600, None),
]


async def test_a_stdio_line_that_is_not_json_rpc_gets_an_error_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    answers: list[tuple[int, int | str | None]] = []
    async with stdio_server(tmp_path) as lines:
        for line, _, _ in GARBAGE:
            await lines.send(line)
            reply = await lines.receive()
            answers.append((reply["error"]["code"], reply["id"]))
        await lines.send('{"jsonrpc": "2.0", "id": 12, "result": "not an object"}')
        await lines.send({"jsonrpc": "2.0", "id": 11, "method": "ping"})
        pong = await lines.receive()  # the malformed response above got no answer
    assert answers == [(code, request_id) for _, code, request_id in GARBAGE]
    assert pong == {"jsonrpc": "2.0", "id": 11, "result": {}}


async def test_a_stdio_server_stops_on_sigterm_while_its_client_keeps_stdin_open(
    tmp_path: Path,
) -> None:
    async with stdio_process(tmp_path) as (lines, process):
        await lines.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        assert await lines.receive() == {"jsonrpc": "2.0", "id": 2, "result": {}}
        process.terminate()
        with anyio.fail_after(WAIT):  # it used to wait for the client's next line
            code = await process.wait()
    assert code == 143, "terminated, as any corral command is by SIGTERM"


@asynccontextmanager
async def in_memory_wire(
    tmp_path: Path,
) -> AsyncIterator[tuple[Any, anyio.abc.ObjectReceiveStream[SessionMessage]]]:
    """The real server on memory streams, spoken to in raw JSON-RPC messages."""
    home = tmp_path / "home"
    config = CorralConfig(
        base_url="http://127.0.0.1:9/v1",
        service=ServiceConfig(allowed_roots=(tmp_path,)),
        home=home,
    )
    options = McpServerOptions(
        home=home, env={"CORRAL_HOME": str(home)}, policy=server_policy(config, tmp_path)
    )
    to_server, server_reads = anyio.create_memory_object_stream[SessionMessage | Exception](1)
    server_writes, from_server = anyio.create_memory_object_stream[SessionMessage](1)
    async with (
        to_server,
        server_reads,
        server_writes,
        from_server,
        open_mcp_server(options) as server,
        anyio.create_task_group() as tg,
    ):
        init = server.create_initialization_options()
        tg.start_soon(server.run, server_reads, server_writes, init)
        yield to_server, from_server
        tg.cancel_scope.cancel()


async def exchange(
    wire: tuple[Any, anyio.abc.ObjectReceiveStream[SessionMessage]], message: dict[str, Any]
) -> dict[str, Any]:
    send, receive = wire
    await send.send(SessionMessage(types.jsonrpc_message_adapter.validate_python(message)))
    if "id" not in message:
        return {}
    with anyio.fail_after(WAIT):
        reply = await receive.receive()
    found: dict[str, Any] = reply.message.model_dump(by_alias=True, exclude_none=True)
    return found


@pytest.mark.parametrize(
    ("asked", "agreed"),
    [("2024-11-05", "2024-11-05"), ("2025-06-18", "2025-06-18"), ("2099-01-01", None)],
)
async def test_a_client_on_an_older_or_newer_protocol_version_gets_one_both_speak(
    tmp_path: Path, asked: str, agreed: str | None
) -> None:
    async with in_memory_wire(tmp_path) as wire:
        params = {**HELLO, "protocolVersion": asked}
        hello = await exchange(wire, {**INITIALIZE, "params": params})
        await exchange(wire, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = await exchange(wire, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    version = hello["result"]["protocolVersion"]
    assert version == agreed if agreed else version < asked and version >= "2025-06-18"
    assert "corral_fanout" in [tool["name"] for tool in tools["result"]["tools"]]


async def test_a_client_that_cancels_a_long_status_wait_is_answered_at_once_after(
    tmp_path: Path,
) -> None:
    gate = Gate(held={0})
    progressed = anyio.Event()

    async def note(progress: float, total: float | None, message: str | None) -> None:
        progressed.set()

    async with open_served(tmp_path, gate) as served:
        client = served.client
        try:
            run_id = answer(await client.call_tool("corral_fanout", fanout_args(1)))["run_id"]
            wait = {"run_id": run_id, "wait_seconds": WAIT * 10}
            with anyio.fail_after(WAIT):
                await gate.reached.wait()
                async with anyio.create_task_group() as tg:
                    tg.start_soon(
                        lambda: client.call_tool("corral_status", wait, progress_callback=note)
                    )
                    await progressed.wait()
                    tg.cancel_scope.cancel()
                runs = answer(await client.call_tool("corral_runs", {}))
        finally:
            gate.release()
        with anyio.fail_after(WAIT):
            done = answer(
                await client.call_tool("corral_status", {"run_id": run_id, "wait_seconds": WAIT})
            )
    assert run_id in json.dumps(runs)
    assert done["status"] == "done", "cancelling the wait left the run alone"
