"""Recording a cassette against an upstream server, and replaying it with no upstream at all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import openai
import pytest

from corral.orchestrator.model_server import ModelServerOptions, serve_model_server

DEADLINE = 10.0


def client_for(base_url: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        base_url=base_url, api_key="cassette-key", max_retries=0, timeout=DEADLINE
    )


async def conversation(client: openai.AsyncOpenAI) -> list[str]:
    """Four requests: plain, streamed, chat streamed, and the first one again."""
    answers = [(await client.responses.create(model="m", input="a")).output_text]
    async with client.responses.stream(model="m", input="b") as stream:
        answers.append((await stream.get_final_response()).output_text)
    chunks = await client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "c"}], stream=True
    )
    answers.append("".join([c.choices[0].delta.content or "" async for c in chunks if c.choices]))
    answers.append((await client.responses.create(model="m", input="a")).output_text)
    return answers


@pytest.mark.anyio
async def test_recorded_cassette_replays_the_same_answers_in_the_same_order(tmp_path: Path) -> None:
    cassette = tmp_path / "cassette.jsonl"
    count = 0

    def numbered(request: dict[str, Any]) -> str:
        nonlocal count
        count += 1
        return f"upstream answer {count}"

    async with serve_model_server(numbered) as upstream:
        recording = ModelServerOptions(record_path=cassette, upstream=upstream.base_url)
        async with (
            serve_model_server(None, recording) as recorder,
            client_for(recorder.base_url) as client,
        ):
            with anyio.fail_after(DEADLINE):
                recorded = await conversation(client)
    replaying = ModelServerOptions(replay_path=cassette)
    async with (
        serve_model_server(None, replaying) as replayer,
        client_for(replayer.base_url) as client,
    ):
        with anyio.fail_after(DEADLINE):
            replayed = await conversation(client)
    assert recorded == [f"upstream answer {n}" for n in (1, 2, 3, 4)]
    assert replayed == recorded
    assert len(cassette.read_text(encoding="utf-8").splitlines()) == 4
    assert upstream.requests[0]["headers"]["authorization"] == "Bearer ...-key"
    assert len(replayer.requests) == 4


@pytest.mark.anyio
async def test_replay_answers_a_request_it_has_not_seen_with_a_404_error(tmp_path: Path) -> None:
    cassette = tmp_path / "cassette.jsonl"
    async with serve_model_server(lambda request: "recorded") as upstream:
        recording = ModelServerOptions(record_path=cassette, upstream=upstream.base_url)
        async with (
            serve_model_server(None, recording) as recorder,
            client_for(recorder.base_url) as client,
        ):
            with anyio.fail_after(DEADLINE):
                await client.responses.create(model="m", input="seen")
    replaying = ModelServerOptions(replay_path=cassette)
    async with (
        serve_model_server(None, replaying) as replayer,
        client_for(replayer.base_url) as client,
    ):
        with anyio.fail_after(DEADLINE):
            first = await client.responses.create(model="m", input="seen")
            with pytest.raises(openai.NotFoundError) as again:
                await client.responses.create(model="m", input="seen")
            with pytest.raises(openai.NotFoundError) as unseen:
                await client.responses.create(model="m", input="never recorded")
    assert first.output_text == "recorded"
    assert "occurrence 2" in again.value.message
    assert unseen.value.code == "cassette_miss"
    assert (
        f"cassette {cassette} has no recorded answer for this /v1/responses request"
        in unseen.value.message
    )
