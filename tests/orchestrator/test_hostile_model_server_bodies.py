"""Request bodies built to break the scripted server get a 400 saying what was wrong, never a
500 with a traceback: JSON nested past what can be read or written again, and strings no UTF-8
can carry; JSON nested up to the server's limit is answered."""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
import pytest

from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.model_server._app import MAX_JSON_DEPTH

pytestmark = [pytest.mark.hostile, pytest.mark.anyio]
DEADLINE = 10.0


def _nested(depth: int) -> bytes:
    """A body whose arrays and objects nest `depth` deep, the body itself included."""
    arrays = depth - 1
    return b'{"model":"m","input":' + b"[" * arrays + b"]" * arrays + b"}"


BODIES = {
    "nested past the recursion limit": _nested(100_000),
    "nested one past the server's limit": _nested(MAX_JSON_DEPTH + 1),
    # `json` reads this deep, but writing a copy of it again passed the recursion limit (a 500).
    "nested where it can be read but not written again": _nested(990),
    "nested past the limit in a chat message": (
        b'{"model":"m","messages":[{"role":"user","content":'
        + b"[" * MAX_JSON_DEPTH
        + b"]" * MAX_JSON_DEPTH
        + b"}]}"
    ),
    "a lone high surrogate": b'{"model":"m","input":"\\ud800"}',
    "a lone low surrogate in a key": b'{"model":"m","input":"hi","metadata":{"\\uDC00":1}}',
    "a surrogate pair turned round": b'{"model":"m","input":"\\udc00\\ud83d"}',
    "a lone surrogate in a chat message": (
        b'{"model":"m","messages":[{"role":"user","content":"x\\udfff"}]}'
    ),
}


@pytest.mark.parametrize("name", sorted(BODIES))
async def test_a_body_built_to_break_the_server_is_refused_with_a_400_saying_why(
    name: str,
) -> None:
    path = "/chat/completions" if b'"messages"' in BODIES[name] else "/responses"
    async with serve_model_server(lambda request: "ok") as server:
        with anyio.fail_after(DEADLINE):
            async with httpx2.AsyncClient(timeout=DEADLINE) as http:
                reply = await http.post(server.base_url + path, content=BODIES[name])
                # The server still answers a well-formed request afterwards.
                good = await http.post(server.base_url + "/responses", json={"input": "hi"})
    assert good.status_code == 200
    assert reply.status_code == 400, reply.text
    error: dict[str, Any] = reply.json()["error"]
    assert error["code"] == "invalid_json"
    assert "Traceback" not in error["message"] and "\n" not in error["message"]


async def test_a_valid_surrogate_pair_is_one_character_and_is_answered() -> None:
    body = b'{"model":"m","input":"horse \\ud83d\\udc0e"}'
    async with serve_model_server(lambda request: request["input"][0]["content"][0]["text"]) as s:
        with anyio.fail_after(DEADLINE):
            async with httpx2.AsyncClient(timeout=DEADLINE) as http:
                reply = await http.post(s.base_url + "/responses", content=body)
    assert reply.status_code == 200
    assert reply.json()["output"][0]["content"][0]["text"] == "horse \U0001f40e"


async def test_a_body_nested_as_deep_as_the_limit_is_answered() -> None:
    async with serve_model_server(lambda request: "deep") as server:
        with anyio.fail_after(DEADLINE):
            async with httpx2.AsyncClient(timeout=DEADLINE) as http:
                body = _nested(MAX_JSON_DEPTH)
                reply = await http.post(server.base_url + "/responses", content=body)
    assert reply.status_code == 200, reply.text
    assert reply.json()["output"][0]["content"][0]["text"] == "deep"


async def test_a_flat_body_whose_text_holds_many_brackets_is_answered() -> None:
    text = "[{" * 2000
    async with serve_model_server(lambda request: "flat") as server:
        with anyio.fail_after(DEADLINE):
            async with httpx2.AsyncClient(timeout=DEADLINE) as http:
                body = {"model": "m", "input": text}
                reply = await http.post(server.base_url + "/responses", json=body)
    assert reply.status_code == 200, reply.text
    assert reply.json()["output"][0]["content"][0]["text"] == "flat"
