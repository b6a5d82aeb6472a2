"""The scripted server's exact bytes: a fixed sequence of requests, answered as it always was.

Pinned before the server's hot path was made cheaper, so any change to what it answers (the
streamed frames, the JSON bodies, the ids derived from the canonical bytes) or to its prefix-cache
figures shows here. The requests carry what a fast JSON path could get wrong: floats written in
both notations, integers past 64 bits, `NaN`, non-ASCII and control characters, unsorted keys.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from corral.orchestrator.model_server import serve_model_server

DEADLINE = 10.0
GOLDEN = Path(__file__).parent.parent / "data" / "model_server_golden.json"
_CLOCK = re.compile(rb'"(created_at|created|completed_at)":\d+')

TOOL = (
    b'{"type":"function","name":"measure","description":"Measure \xc3\xa9 \xe2\x98\x83 '
    b'\\u2028 \\u0001 \\"q\\"","strict":false,"parameters":{"type":"object","required":["x"],'
    b'"properties":{"x":{"type":"number","minimum":0.5,"maximum":1e16,"multipleOf":1e-05,'
    b'"default":100.0,"examples":[1.5e300,-0.0,3,12345678901234567890123]}}}}'
)
SYSTEM = b'"Be brief. \xc3\xa9\xe2\x80\x94\xf0\x9f\x90\x8e \\t tab \\u001f"'
CALL = (
    b'{"type":"function_call","call_id":"call_1","name":"measure","arguments":"{\\"x\\": 0.1}",'
    b'"id":"fc_1","status":"completed"}'
)
OUTPUT = b'{"type":"function_call_output","call_id":"call_1","output":"0.30000000000000004"}'


PLAIN_TOOL = (
    b'{"type":"function","name":"measure","description":"\xc3\xa9 \\u2028 \\u0001 \\\\",'
    b'"parameters":{"type":"object","properties":{"x":{"type":"number","minimum":0.5,'
    b'"maximum":1e16,"default":100.0,"examples":[1.5e300,-0.0,3,-9223372036854775808]}}}}'
)
"""Floats that orjson writes as `json` does: these requests take the fast path."""
BIG_INT_TOOL = b'{"type":"function","name":"big","parameters":{"default":123456789012345678901}}'


def _responses(
    items: list[bytes],
    *,
    stream: bool,
    key: bytes = b'"golden"',
    tools: bytes = TOOL,
    metadata: bytes = b'{"z":1,"a":2.50,"nan":NaN}',
) -> bytes:
    return (
        b'{"model":"scripted","instructions":' + SYSTEM + b',"tools":[' + tools + b'],'
        b'"input":[' + b",".join(items) + b'],"stream":' + (b"true" if stream else b"false") +
        b',"prompt_cache_key":' + key + b',"metadata":' + metadata + b',"temperature":0.7}'
    )  # fmt: skip


def _chat(*, stream: bool) -> bytes:
    tool = b'{"type":"function","function":{"name":"measure","parameters":{"type":"object"}}}'
    messages = (
        b'[{"role":"system","content":' + SYSTEM + b'},{"role":"user","content":"hi \xc3\xa9"},'
        b'{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function",'
        b'"function":{"name":"measure","arguments":"{}"}}]},'
        b'{"role":"tool","tool_call_id":"call_1","content":"1e-07"}]'
    )
    return (
        b'{"model":"scripted","messages":'
        + messages
        + b',"tools":['
        + tool
        + b'],"stream":'
        + (b"true" if stream else b"false")
        + b',"stream_options":{"include_usage":true},"prompt_cache_key":"golden-chat"}'
    )


USER = b'{"role":"user","content":"Measure it \xe2\x98\x83"}'
REQUESTS: list[tuple[str, bytes]] = [
    ("/responses", _responses([USER], stream=True)),
    ("/responses", _responses([USER, CALL, OUTPUT], stream=True)),
    ("/responses", _responses([USER, CALL, OUTPUT, USER], stream=False)),
    ("/responses", _responses([USER], stream=True, key=b"null")),
    ("/chat/completions", _chat(stream=True)),
    ("/chat/completions", _chat(stream=False)),
    *(
        ("/responses", _responses(items, stream=stream, key=b'"plain"', tools=tools, metadata=m))
        for items, stream, tools, m in [
            ([USER], True, PLAIN_TOOL, b'{"b":"\xe2\x98\x83","a":[1,2.5]}'),
            ([USER, CALL, OUTPUT], True, PLAIN_TOOL, b"{}"),
            ([USER, CALL, OUTPUT], False, PLAIN_TOOL + b"," + BIG_INT_TOOL, b"{}"),
            ([USER, CALL, OUTPUT, USER], True, BIG_INT_TOOL, b'{"big":123456789012345678901}'),
        ]
    ),
]


def scripted(request: dict[str, Any]) -> Any:
    """Text long enough for several deltas, a reasoning item, and a call with float arguments."""
    seen = len(request["input"])
    text = f'Seen {seen} items; \u00e9\u2603\U0001f40e \u2028 "quoted" and a long tail ' * 2
    return {
        "output": [
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "think"}]},
            {"type": "message", "content": text},
            {"type": "function_call", "name": "measure", "arguments": {"x": 0.1, "y": 1e-05}},
        ]
    }


async def _exchange() -> dict[str, Any]:
    answers: list[dict[str, Any]] = []
    with anyio.fail_after(DEADLINE):
        async with (
            serve_model_server(scripted) as server,
            httpx2.AsyncClient(timeout=DEADLINE) as http,
        ):
            for path, body in REQUESTS:
                headers = {"content-type": "application/json"}
                reply = await http.post(server.base_url + path, content=body, headers=headers)
                answers.append(
                    {
                        "status": reply.status_code,
                        "content_type": reply.headers["content-type"],
                        "body": _CLOCK.sub(rb'"\1":0', reply.content).decode(),
                    }
                )
            figures = [(r["input_bytes"], r["prefix_bytes"]) for r in server.requests]
            stats = server.stats()
    return {"answers": answers, "records": figures, "stats": stats}


@pytest.mark.anyio
async def test_a_fixed_request_sequence_gets_the_same_bytes_and_cache_figures_as_pinned() -> None:
    got = await _exchange()
    expected = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert got["records"] == [tuple(pair) for pair in expected["records"]]
    assert got["stats"] == expected["stats"]
    for index, (answer, pinned) in enumerate(zip(got["answers"], expected["answers"], strict=True)):
        assert answer == pinned, f"request {index} ({REQUESTS[index][0]}) answered differently"
