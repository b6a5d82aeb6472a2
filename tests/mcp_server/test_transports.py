"""The real `corral mcp-server` command, driven by the official `mcp` Python client: a 50-item
fan-out over stdio with progress notifications, and the same over streamable HTTP with a token
(401 without it). Each run lands in the journal that `corral status` reads."""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from corral.agents import open_sqlite_store
from corral.orchestrator.model_server import serve_model_server

from ..e2e._cli import corral_argv, corral_env
from ..service._harness import TOKEN, reporter
from ._harness import WAIT, answer, fanout_args

pytestmark = pytest.mark.anyio

COUNT = 50


async def delegate_fanout(client: Client) -> tuple[list[float], list[dict[str, object]], str]:
    """Start a `COUNT`-item fan-out, wait for it with progress, read every result."""
    seen: list[float] = []

    async def note(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    args = fanout_args(COUNT, concurrency=8, wait_seconds=WAIT)
    with anyio.fail_after(WAIT + 10):
        started = answer(await client.call_tool("corral_fanout", args, progress_callback=note))
    run_id = str(started["run_id"])
    read = await client.read_resource(f"corral://runs/{run_id}/results")
    (contents,) = read.contents
    assert isinstance(contents, types.TextResourceContents)
    return seen, json.loads(contents.text)["results"], run_id


async def test_a_stdio_client_delegates_a_50_item_fanout_and_reads_every_result(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    async with serve_model_server(reporter) as model:
        command, *args = corral_argv("mcp-server")
        params = StdioServerParameters(
            command=command, args=args, env=corral_env(home, model.base_url), cwd=tmp_path
        )
        async with Client(params) as client:
            progress, results, run_id = await delegate_fanout(client)
    assert progress[-1] == COUNT and len(progress) >= 2
    assert [r["result"] for r in results] == [{"n": n * 10} for n in range(COUNT)]
    async with open_sqlite_store(home / "journal.sqlite") as store:
        journaled = await store.get_run(run_id)
    assert journaled is not None and journaled.status == "done"


@asynccontextmanager
async def http_server(tmp_path: Path, model_url: str) -> AsyncIterator[str]:
    """`corral mcp-server --http` on a free port; yields its endpoint's URL."""
    env = corral_env(tmp_path / "home", model_url, CORRAL_API_TOKEN=TOKEN)
    argv = corral_argv("mcp-server", "--http", "--port", "0")
    process = await anyio.open_process(
        argv, env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
    )
    try:
        assert process.stderr is not None
        seen = b""
        with anyio.fail_after(WAIT):
            while b"listening on " not in seen or not seen.endswith(b"\n"):
                seen += await process.stderr.receive()
        url = seen.decode().split("listening on ", 1)[1].split()[0]
        yield url
    finally:
        process.terminate()
        with anyio.move_on_after(WAIT, shield=True):
            await process.wait()
        await process.aclose()


async def test_an_http_client_with_the_token_delegates_a_fanout_and_one_without_gets_401(
    tmp_path: Path,
) -> None:
    async with serve_model_server(reporter) as model, http_server(tmp_path, model.base_url) as url:
        async with httpx2.AsyncClient(timeout=WAIT) as http:
            refused = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=WAIT) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            progress, results, _ = await delegate_fanout(client)
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"].startswith("Bearer")
    assert progress[-1] == COUNT
    assert len(results) == COUNT and all(r["status"] == "done" for r in results)
