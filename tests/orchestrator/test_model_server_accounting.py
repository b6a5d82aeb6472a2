"""What the server counts: canonical bytes, shared prefixes, `/stats`, and the request log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx2
import openai
import pytest

from corral.orchestrator.model_server import (
    ModelServerOptions,
    canonical_bytes,
    serve_model_server,
    shared_prefix_len,
)

DEADLINE = 10.0
TOOL: Any = {
    "type": "function",
    "name": "read_file",
    "description": "Read a file.",
    "parameters": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
    "strict": False,
}
FIRST_INPUT: Any = [
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Read é.txt"}]}
]
SECOND_INPUT: Any = [
    *FIRST_INPUT,
    {
        "type": "function_call",
        "call_id": "c1",
        "name": "read_file",
        "arguments": '{"path":"é.txt"}',
    },
    {"type": "function_call_output", "call_id": "c1", "output": "contents"},
]


def by_hand(instructions: str, tools: list[Any], items: list[Any]) -> bytes:
    """The canonical serialisation, spelled out as the spec gives it."""
    lines = [instructions, *tools, *items]
    text = "".join(
        json.dumps(x, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"
        for x in lines
    )
    return text.encode("utf-8")


def test_canonical_bytes_are_sorted_compact_json_lines_of_instructions_tools_and_items() -> None:
    request = {"model": "m", "instructions": "Be brief.", "tools": [TOOL], "input": FIRST_INPUT}
    expected = by_hand("Be brief.", [TOOL], FIRST_INPUT)
    assert canonical_bytes(request) == expected
    assert expected.startswith(b'"Be brief."\n{"description":"Read a file.","name":"read_file"')
    assert "é".encode() in expected


def test_shared_prefix_len_is_the_longest_common_prefix() -> None:
    assert shared_prefix_len(b"abcdef", b"abcxyz") == 3
    assert shared_prefix_len(b"abc", b"abcdef") == 3
    assert shared_prefix_len(b"abcdef", b"abc") == 3
    assert shared_prefix_len(b"", b"abc") == 0
    assert shared_prefix_len(b"x" * 1000 + b"a", b"x" * 1000 + b"b") == 1000


@pytest.mark.anyio
async def test_prefix_bytes_count_what_the_previous_request_with_the_same_key_shared() -> None:
    first = by_hand("Be brief.", [TOOL], FIRST_INPUT)
    second = by_hand("Be brief.", [TOOL], SECOND_INPUT)
    async with (
        serve_model_server(lambda request: "ok") as server,
        _client(server.base_url) as client,
    ):
        with anyio.fail_after(DEADLINE):
            ask = client.responses.create
            await ask(
                model="m",
                instructions="Be brief.",
                tools=[TOOL],
                input=FIRST_INPUT,
                prompt_cache_key="agent-1",
            )
            extended = await ask(
                model="m",
                instructions="Be brief.",
                tools=[TOOL],
                input=SECOND_INPUT,
                prompt_cache_key="agent-1",
            )
            await ask(
                model="m",
                instructions="Be brief.",
                tools=[TOOL],
                input=FIRST_INPUT,
                prompt_cache_key="agent-2",
            )
            await ask(
                model="m",
                instructions="Be short.",
                tools=[TOOL],
                input=FIRST_INPUT,
                prompt_cache_key="agent-1",
            )
            await ask(model="m", instructions="Be brief.", tools=[TOOL], input=FIRST_INPUT)
    # '"Be ' is all that "Be short." shares with the extended request before it.
    assert [r["prefix_bytes"] for r in server.requests] == [0, len(first), 0, 4, 0]
    assert [r["input_bytes"] for r in server.requests] == [
        len(first),
        len(second),
        len(first),
        len(first),
        len(first),
    ]
    assert extended.usage is not None
    assert extended.usage.input_tokens == len(second) // 4
    assert extended.usage.input_tokens_details.cached_tokens == len(first) // 4
    stats = server.stats()
    assert stats["input_bytes"] == 4 * len(first) + len(second)
    assert stats["prefix_shared_bytes"] == len(first) + 4


@pytest.mark.anyio
async def test_policy_usage_replaces_the_estimate() -> None:
    def with_usage(request: dict[str, Any]) -> dict[str, Any]:
        usage = {
            "input_tokens": 1000,
            "output_tokens": 20,
            "cached_tokens": 900,
            "reasoning_tokens": 5,
        }
        return {"output": [{"type": "message", "content": "ok"}], "usage": usage}

    async with serve_model_server(with_usage) as server, _client(server.base_url) as client:
        with anyio.fail_after(DEADLINE):
            response = await client.responses.create(model="m", input="hi")
            chat = await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}]
            )
    assert response.usage is not None
    assert (
        response.usage.input_tokens,
        response.usage.output_tokens,
        response.usage.total_tokens,
    ) == (1000, 20, 1020)
    assert response.usage.input_tokens_details.cached_tokens == 900
    assert response.usage.output_tokens_details.reasoning_tokens == 5
    assert chat.usage is not None and chat.usage.prompt_tokens_details is not None
    assert (chat.usage.prompt_tokens, chat.usage.prompt_tokens_details.cached_tokens) == (1000, 900)


@pytest.mark.anyio
async def test_stats_endpoint_reports_requests_bytes_concurrency_and_faults() -> None:
    options = ModelServerOptions(fault_plan=("429", "ok", "disconnect"))
    async with (
        serve_model_server(lambda request: "ok", options) as server,
        httpx2.AsyncClient() as http,
    ):
        with anyio.fail_after(DEADLINE):
            url = server.base_url
            await http.post(f"{url}/responses", json={"model": "m", "input": "hi"})
            chat = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
            await http.post(f"{url}/chat/completions", json=chat)
            with pytest.raises(httpx2.RemoteProtocolError):
                await http.post(f"{url}/chat/completions", json=chat)
            stats = (await http.get(url.removesuffix("/v1") + "/stats")).json()
    assert stats["requests"] == {
        "total": 3,
        "per_endpoint": {"/v1/responses": 1, "/v1/chat/completions": 2},
    }
    assert stats["input_bytes"] == sum(r["input_bytes"] for r in server.requests) > 0
    assert stats["prefix_shared_bytes"] == 0
    assert stats["max_in_flight"] == 1
    assert stats["faults"] == {"server_error": 0, "rate_limited": 1, "disconnect": 1}
    assert stats == server.stats()


@pytest.mark.anyio
async def test_request_log_holds_one_json_line_per_request_with_the_credential_redacted(
    tmp_path: Path,
) -> None:
    log = tmp_path / "requests.jsonl"
    options = ModelServerOptions(log_path=log)
    async with (
        serve_model_server(lambda r: "ok", options) as server,
        _client(server.base_url) as client,
    ):
        with anyio.fail_after(DEADLINE):
            await client.responses.create(model="m", input="hi", prompt_cache_key="k")
            await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "yo"}]
            )
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [r["endpoint"] for r in records] == ["/v1/responses", "/v1/chat/completions"]
    assert records[0]["prompt_cache_key"] == "k"
    assert records[0]["body"]["input"] == "hi"
    assert records[1]["normalised"]["input"] == [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "yo"}]}
    ]
    assert {"time", "model", "prefix_bytes", "normalised", "body"} <= set(records[0])
    assert records[0]["headers"]["authorization"] == "Bearer ...-key"
    assert "secret-test-key" not in log.read_text(encoding="utf-8")
    assert records == server.requests


def _client(base_url: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        base_url=base_url, api_key="secret-test-key", max_retries=0, timeout=DEADLINE
    )


@pytest.mark.anyio
async def test_a_server_that_keeps_no_requests_still_counts_them_and_lists_their_models(
    tmp_path: Path,
) -> None:
    log = tmp_path / "requests.jsonl"
    options = ModelServerOptions(keep_requests=False, log_path=log)
    async with (
        serve_model_server(lambda request: "ok", options) as server,
        httpx2.AsyncClient() as http,
    ):
        with anyio.fail_after(DEADLINE):
            url = server.base_url
            for model in ("m1", "m2", "m1"):
                body = {"model": model, "input": "hi", "prompt_cache_key": "k"}
                await http.post(f"{url}/responses", json=body)
            stats = (await http.get(url.removesuffix("/v1") + "/stats")).json()
            listed = (await http.get(f"{url}/models")).json()
    assert server.requests == []
    assert stats["requests"]["total"] == 3
    assert stats["prefix_shared_bytes"] == 2 * stats["input_bytes"] // 3 > 0
    assert [model["id"] for model in listed["data"]] == ["corral-scripted", "m1", "m2"]
    indexes = [json.loads(line)["index"] for line in log.read_text(encoding="utf-8").splitlines()]
    assert indexes == [0, 1, 2]
