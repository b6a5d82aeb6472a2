"""A model endpoint whose JSON nests deeper than any reader goes: a body, a stream event or a
refusal's error object of `[[[[...` or `{"a":{"a":...`. The client reads it as JSON it cannot
read (a model error or a failed attempt, said in one line), never as a `RecursionError` that
escapes the client and ends the run with a traceback."""

from __future__ import annotations

import anyio
import pytest
from anyio.abc import SocketStream

from corral.agents._json import loads
from corral.agents.model import ModelError
from tests.agents._raw_endpoint import complete_through, head, raw_endpoint

pytestmark = [pytest.mark.hostile, pytest.mark.anyio]

TEST_DEADLINE = 20
DEPTH = 200_000
DEEP = {
    "arrays": b"[" * DEPTH + b"]" * DEPTH,
    "objects": b'{"a":' * DEPTH + b"1" + b"}" * DEPTH,
    "an event of arrays": b'{"type":"response.completed","response":' + b"[" * DEPTH,
}
SSE = head("200 OK", "Content-Type: text/event-stream")
JSON = head("200 OK", "Content-Type: application/json")


def _answers(deep: bytes) -> dict[str, tuple[bool, bytes]]:
    """Whether the request streams, and what the endpoint answers, per place the JSON goes."""
    sized = head("200 OK", "Content-Type: application/json", f"Content-Length: {len(deep)}")
    refused = head("400 Bad Request", "Content-Type: application/json") + deep[: 60 * 1024]
    return {
        "stream event": (True, SSE + b"event: response.completed\ndata: " + deep + b"\n\n"),
        "body": (False, sized + deep),
        "refusal": (False, refused),
    }


@pytest.mark.parametrize("place", ["stream event", "body", "refusal"])
@pytest.mark.parametrize("shape", sorted(DEEP))
async def test_json_nested_past_reading_is_a_model_error_not_a_traceback(
    place: str, shape: str
) -> None:
    streamed, answer = _answers(DEEP[shape])[place]

    async def respond(stream: SocketStream) -> None:
        await stream.send(answer)

    with anyio.fail_after(TEST_DEADLINE):
        async with raw_endpoint(respond) as endpoint:
            with pytest.raises(ModelError) as failed:
                await complete_through(endpoint.base_url, stream=streamed)
    assert "\n" not in str(failed.value) and len(str(failed.value)) < 2000


@pytest.mark.parametrize("shape", sorted(DEEP))
def test_the_codec_refuses_json_nested_past_reading_as_a_value_error(shape: str) -> None:
    for text in (DEEP[shape], DEEP[shape].decode()):
        with pytest.raises(ValueError, match="nest"):
            loads(text)
