"""`web_search`: off by default; with network, the Responses request carries the hosted tool
(after the function tools); on Chat Completions it is not offered and the environment says so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from corral.orchestrator.model_server import serve_model_server

from ._cli import corral_env, run_corral

pytestmark = pytest.mark.anyio

HOSTED = {"type": "web_search", "external_web_access": True}


def messages(record: dict[str, Any]) -> str:
    return "".join(
        part.get("text", "")
        for item in record["normalised"]["input"]
        if item.get("type") == "message"
        for part in item["content"]
    )


async def first_request(tmp_path: Path, *settings: str) -> dict[str, Any]:
    async with serve_model_server(lambda request: "done") as server:
        env = corral_env(tmp_path / "home", server.base_url)
        args = ["exec", *[f for s in settings for f in ("-c", s)], "look it up"]
        result = await run_corral(args, env=env, cwd=tmp_path)
        assert result.code == 0, result.stderr
        record: dict[str, Any] = server.requests[0]
    return record


@pytest.mark.parametrize(
    ("settings", "offered"),
    [
        ((), False),
        (('web_search="live"',), False),
        (('web_search="live"', "network_access=true"), True),
    ],
    ids=["default-off", "no-network", "live-with-network"],
)
async def test_web_search_is_offered_only_when_on_and_the_profile_has_network(
    tmp_path: Path, settings: tuple[str, ...], offered: bool
) -> None:
    tools = (await first_request(tmp_path, *settings))["body"]["tools"]
    assert (tools[-1] == HOSTED) is offered
    assert sum(t.get("type") == "web_search" for t in tools) == int(offered)


async def test_on_chat_completions_web_search_is_not_offered_and_the_environment_says_so(
    tmp_path: Path,
) -> None:
    record = await first_request(
        tmp_path, 'model_provider_api="chat"', 'web_search="live"', "network_access=true"
    )
    assert all(tool["type"] == "function" for tool in record["body"]["tools"])
    assert "<web_search>unavailable: the Chat Completions API has no hosted web search" in (
        messages(record)
    )
