"""The HTTP surface: routes, and the path every model request takes through the server.

A model request is parsed, normalised, given its fault and logged on arrival (in that order, so
the seeded faults follow arrival order), then waits at the concurrency gate, sleeps the latency,
and is answered by the policy, the cassette or the upstream, or by the injected fault.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from dataclasses import dataclass, replace
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, ExceptionHandler, Receive, Scope, Send

from ._answer import BYTES_PER_TOKEN, build_answer
from ._cassette import CassetteRecorder, CassetteReplayer
from ._chat_wire import DONE_FRAME, chat_chunks, chat_completion, encode_chunk
from ._errors import PolicyFailed
from ._faults import FaultPlanner
from ._journal import RequestJournal
from ._json import holds_lone_surrogate, is_plain, nests_deeper_than, parse, private_copy
from ._normalise import CHAT_COMPLETIONS, RESPONSES, normalise_request
from ._options import FaultKind, ModelServerOptions, Policy
from ._policy import call_policy
from ._reply import (
    Reply,
    close_connection,
    error_reply,
    json_reply,
    send_cut_reply,
    send_reply,
    sse_reply,
)
from ._responses_wire import encode_event, response_events, response_object
from ._throttle import Throttle, Verdict, retry_after_headers

DEFAULT_MODEL = "corral-scripted"
MAX_BODY_BYTES = 64 << 20
"""The largest request body read: far past any conversation a model takes, and a bound on what
one request can make the server hold (it reads the whole body before parsing it)."""
MAX_JSON_DEPTH = 900
"""The deepest nesting of arrays and objects a body may have (the body itself counts one): what
`json` reads is up to about 980 deep here, but a copy or a log line of it must be written
again a few calls deeper, where that much would pass Python's recursion limit."""


@dataclass
class ServerState:
    """What the routes share; built and closed by `serve_model_server`."""

    options: ModelServerOptions
    policy: Policy | None
    journal: RequestJournal
    faults: FaultPlanner
    limiter: anyio.CapacityLimiter | None
    throttle: Throttle | None = None
    replayer: CassetteReplayer | None = None
    recorder: CassetteRecorder | None = None


def build_app(state: ServerState) -> ASGIApp:
    """The server's ASGI app: the two model endpoints first, everything else through Starlette."""
    endpoints = {path: _ModelEndpoint(state, path) for path in (RESPONSES, CHAT_COMPLETIONS)}
    return _Dispatch(endpoints, _other_routes(state, endpoints))


class _Dispatch:
    """Sends a model request straight to its endpoint, past Starlette's middleware and router
    (which cost a tenth of the server's CPU per request); the rest goes through Starlette."""

    def __init__(self, endpoints: dict[str, _ModelEndpoint], others: ASGIApp) -> None:
        self._endpoints = endpoints
        self._others = others

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            endpoint = self._endpoints.get(scope["path"])
            if endpoint is not None:
                await endpoint(scope, receive, send)
                return
        await self._others(scope, receive, send)


def _other_routes(state: ServerState, endpoints: dict[str, _ModelEndpoint]) -> Starlette:
    async def stats(request: Request) -> Response:
        return JSONResponse(state.journal.stats())

    async def models(request: Request) -> Response:
        names = dict.fromkeys([DEFAULT_MODEL, *state.journal.models()])
        data = [{"id": n, "object": "model", "created": 0, "owned_by": "corral"} for n in names]
        return JSONResponse({"object": "list", "data": data})

    # The model endpoints stay routed here too, so another method on them is answered 405.
    routes = [
        Route(RESPONSES, endpoints[RESPONSES], methods=["POST"]),
        Route(CHAT_COMPLETIONS, endpoints[CHAT_COMPLETIONS], methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/stats", stats, methods=["GET"]),
    ]
    handlers: dict[Any, ExceptionHandler] = {404: _http_error, 405: _http_error}
    return Starlette(routes=routes, exception_handlers=handlers)


async def _http_error(request: Request, exc: Exception) -> Response:
    """Unknown paths and methods, answered in the OpenAI error shape the SDKs parse."""
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    detail = exc.detail if isinstance(exc, HTTPException) else str(exc)
    message = f"{request.method} {request.url.path}: {detail}"
    error = {"message": message, "type": "invalid_request_error", "param": None, "code": None}
    return JSONResponse({"error": error}, status)


class _ModelEndpoint:
    """The ASGI app behind `/v1/responses` and `/v1/chat/completions`."""

    def __init__(self, state: ServerState, endpoint: str) -> None:
        self._state = state
        self._endpoint = endpoint

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = await _read_body(receive)
        if raw is None:
            return  # the client went away before it finished sending
        if isinstance(raw, Reply):
            await send_reply(send, raw)
            return
        parsed = _parse_body(raw)
        if isinstance(parsed, Reply):
            await send_reply(send, parsed)
            return
        body, plain = parsed
        state = self._state
        normalised = normalise_request(self._endpoint, body)
        # A throttled request draws no fault: the seeded faults follow the admitted requests.
        verdict = state.throttle.admit(len(raw) // BYTES_PER_TOKEN) if state.throttle else None
        throttled = verdict is not None and not verdict.admitted
        fault = None if throttled else state.faults.next_fault()
        pairs = _header_pairs(scope)
        headers = dict(pairs)
        record, canonical = state.journal.record(
            self._endpoint,
            body,
            normalised,
            fault,
            headers,
            throttled=throttled,
            plain=plain,
            query=scope.get("query_string", b"").decode("latin-1"),
        )
        if verdict is not None and throttled:
            await send_reply(send, _throttled(verdict))
            return
        authorization = next((value for name, value in pairs if name == "authorization"), None)
        exchange = _Exchange(
            self._endpoint, body, raw, record, canonical, authorization, plain, verdict
        )
        gate = state.limiter if state.limiter is not None else contextlib.nullcontext()
        async with gate:
            with state.journal.answering():
                if state.options.latency_ms:
                    await anyio.sleep(state.options.latency_ms / 1000)
                await self._answer(scope, receive, send, exchange, fault)

    async def _answer(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        exchange: _Exchange,
        fault: FaultKind | None,
    ) -> None:
        if fault == "rate_limited":
            await send_reply(send, _rate_limited(self._state.options.retry_after))
        elif fault == "server_error":
            message = "injected server error (from --fault-plan or --fail-rate)"
            await send_reply(send, error_reply(500, message, "server_error", "injected_fault"))
        elif fault == "disconnect" and not exchange.streamed:
            await close_connection(scope, receive)
        elif fault == "disconnect":
            await send_cut_reply(scope, receive, send, await self._produce(exchange))
        else:
            await send_reply(
                send, self._with_limit_headers(await self._produce(exchange), exchange)
            )

    def _with_limit_headers(self, reply: Reply, exchange: _Exchange) -> Reply:
        """`reply` with the rate-limit headers, its output tokens charged to the `--tpm` bucket."""
        throttle, verdict = self._state.throttle, exchange.verdict
        if throttle is None or verdict is None:
            return reply
        throttle.charge_output(exchange.output_tokens)
        return replace(reply, headers=[*reply.headers, *verdict.headers])

    async def _produce(self, exchange: _Exchange) -> Reply:
        state = self._state
        if state.replayer is not None:
            return state.replayer.answer(exchange.endpoint, exchange.body)
        if state.recorder is not None:
            return await state.recorder.forward(
                exchange.endpoint, exchange.body, exchange.raw, exchange.authorization
            )
        assert state.policy is not None  # check_options guarantees one answer source
        return await _policy_reply(state.policy, exchange)


@dataclass
class _Exchange:
    endpoint: str
    body: dict[str, Any]
    raw: bytes
    record: dict[str, Any]
    canonical: bytes
    authorization: str | None
    """The request's first `authorization` header, which a recording forwards."""
    plain: bool
    """The body parsed `_json.Checked` plain: orjson may write what echoes it."""
    verdict: Verdict | None = None
    output_tokens: int = 0

    @property
    def streamed(self) -> bool:
        return self.body.get("stream") is True


async def _policy_reply(policy: Policy, exchange: _Exchange) -> Reply:
    try:
        request = private_copy(exchange.record["normalised"], plain=exchange.plain)
        result = await call_policy(policy, request)
        answer = build_answer(
            result,
            id_stem=hashlib.sha256(exchange.canonical).hexdigest()[:16],
            created_at=int(time.time()),
            input_bytes=exchange.record["input_bytes"],
            prefix_bytes=exchange.record["prefix_bytes"],
        )
    except PolicyFailed as exc:
        return error_reply(500, str(exc), "server_error", "policy_failed")
    exchange.output_tokens = answer.usage.output_tokens
    body = exchange.body
    # The answer echoes the body and carries the policy's output: both must be plain for orjson.
    plain = exchange.plain and is_plain(answer.output)
    if exchange.endpoint == CHAT_COMPLETIONS and exchange.streamed:
        chunks = [encode_chunk(chunk, plain=plain) for chunk in chat_chunks(body, answer)]
        return sse_reply([*chunks, DONE_FRAME])
    if exchange.endpoint == CHAT_COMPLETIONS:
        return json_reply(200, chat_completion(body, answer), plain=plain)
    if exchange.streamed:
        return sse_reply([encode_event(e, plain=plain) for e in response_events(body, answer)])
    return json_reply(200, response_object(body, answer, done=True), plain=plain)


def _header_pairs(scope: Scope) -> list[tuple[str, str]]:
    return [(name.decode("latin-1"), value.decode("latin-1")) for name, value in scope["headers"]]


async def _read_body(receive: Receive) -> bytes | Reply | None:
    """The request's body, None when the client disconnected first, or the 413 reply once it
    passes `MAX_BODY_BYTES` (the rest is not read)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            refusal = f"the request body passed {MAX_BODY_BYTES >> 20} MiB; send a shorter one"
            return error_reply(413, refusal, "invalid_request_error", "request_too_large")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _parse_body(raw: bytes) -> tuple[dict[str, Any], bool] | Reply:
    """The body and whether orjson may write what echoes it, or the 400 reply saying why not."""
    try:
        body, checked = parse(raw)
    except RecursionError:
        return _too_deep()
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        message = f"the request body is not JSON ({exc}); send a JSON object"
        return error_reply(400, message, "invalid_request_error", "invalid_json")
    if not isinstance(body, dict):
        message = f"the request body is a JSON {type(body).__name__}; send a JSON object"
        return error_reply(400, message, "invalid_request_error", "invalid_json")
    # Options the answer is built from: refused as OpenAI would, rather than ignored or a 500.
    if body.get("n", 1) not in (1, None):
        message = f"n={body['n']!r}: this server gives one choice per request; send n=1 or none"
        return error_reply(400, message, "invalid_request_error", "unsupported_value")
    if not isinstance(body.get("stream_options") or {}, dict):
        message = 'stream_options must be an object, e.g. {"include_usage": true}'
        return error_reply(400, message, "invalid_request_error", "invalid_type")
    if nests_deeper_than(raw, body, MAX_JSON_DEPTH):
        return _too_deep()
    if holds_lone_surrogate(raw, body):
        message = (
            "the request body holds a lone UTF-16 surrogate escape (\\ud800-\\udfff without "
            "its pair), which no UTF-8 text can carry; send valid Unicode"
        )
        return error_reply(400, message, "invalid_request_error", "invalid_json")
    return body, checked.plain


def _too_deep() -> Reply:
    message = (
        f"the request body nests JSON deeper than {MAX_JSON_DEPTH} arrays and objects; "
        "send a flatter object"
    )
    return error_reply(400, message, "invalid_request_error", "invalid_json")


def _throttled(verdict: Verdict) -> Reply:
    message = (
        f"rate limit reached for {verdict.limit} per minute (--rpm/--tpm); "
        f"retry in {verdict.retry_after:.3g} s"
    )
    return error_reply(429, message, verdict.limit, "rate_limit_exceeded", verdict.headers)


def _rate_limited(retry_after: float) -> Reply:
    headers = retry_after_headers(retry_after)
    message = f"injected rate limit (--fault-plan or --ratelimit-rate); retry in {retry_after:g} s"
    return error_reply(429, message, "requests", "rate_limit_exceeded", headers)
