"""The HTTP API as a Starlette app: thin handlers over `RunManager` and the journal.

Handlers validate, call the manager or read the journal (`read_status`), and shape JSON; they
never run agents themselves. Errors map to status codes here: 422 for invalid requests (and
for requests past the server's `[service]` allow-lists, or a reused `Idempotency-Key`), 413 for
bodies over the limit, 404 for unknown runs, 429 with `Retry-After` for a full queue, 204 for a
reconnect to an event stream that has ended. Unknown paths and methods answer in the same JSON
shape (`{"error": ...}`), so a client can read every error body the same way.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import anyio
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from corral.agents import RunRecord
from corral.tools import CorralError, InvalidInput

from .._inspect import read_status
from ._approval_routes import approval_routes
from ._auth import BearerAuth
from ._errors import QueueFull, RunBusy
from ._events import OPEN_STATUSES, EventLog
from ._models import RUN_REQUEST
from ._openapi import openapi_document
from ._paging import BadPage, page_of
from ._runs import RunManager
from ._sessions import SessionBook
from ._sse import event_stream, is_over, parse_cursor
from .dashboard import RunList, dashboard_routes

MAX_BODY_BYTES = 1 << 20
SSE_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
_WITHOUT_REPORT = frozenset({"exec", "fanout"})
"""Run kinds that never keep a report: asking for one is not a matter of waiting."""


class _BodyTooLarge(Exception):
    pass


def build_app(
    manager: RunManager,
    token: str,
    sessions: SessionBook | None = None,
    hosts: frozenset[str] | None = None,
    content: bool = False,
) -> Starlette:
    """The app; `hosts` are the only `Host` values it answers (any when None); `content` lets
    the dashboard show tool arguments and results, not only their sizes."""
    sessions = sessions or SessionBook()
    api = _Api(manager)
    routes = [
        Route("/healthz", api.healthz),
        Route("/openapi.json", api.openapi),
        Route("/v1/runs", api.runs, methods=["GET", "POST"]),  # one route: one true `Allow`
        Route("/v1/runs/{run_id}", api.get_run),
        Route("/v1/runs/{run_id}/agents", api.agents),
        Route("/v1/runs/{run_id}/items", api.items),
        Route("/v1/runs/{run_id}/results", api.results),
        Route("/v1/runs/{run_id}/report", api.report),
        Route("/v1/runs/{run_id}/events", api.events),
        Route("/v1/runs/{run_id}/cancel", api.cancel, methods=["POST"]),
        Route("/v1/runs/{run_id}/retry", api.retry, methods=["POST"]),
        *approval_routes(manager),
        Route("/v1/dashboard/runs", RunList(manager).list_runs),
        *dashboard_routes(token, sessions, content=content),
    ]
    auth = Middleware(BearerAuth, token=token, sessions=sessions, hosts=hosts)
    handlers = {HTTPException: _http_error}
    return Starlette(routes=routes, middleware=[auth], exception_handlers=handlers)


def _error(status: int, detail: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": detail, **extra}, status_code=status)


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own refusals (no such path, a method the path does not take) as JSON."""
    assert isinstance(exc, HTTPException)
    detail = f"{request.method} {request.url.path}: {exc.detail}"
    return JSONResponse({"error": detail}, status_code=exc.status_code, headers=exc.headers)


def _first_problem(errors: list[dict[str, Any]]) -> str:
    """The first validation error as one line: where, then what (pydantic's own words)."""
    if not errors:
        return "the body does not match any run kind"
    first = errors[0]
    where = ".".join(str(part) for part in first.get("loc", ()))
    message = str(first.get("msg", "")).removeprefix("Value error, ")
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {message}{more}" if where else f"{message}{more}"


def _stream_head() -> Response:
    """GET's headers without its body; no length, since the stream has none."""
    head = Response(media_type="text/event-stream", headers=SSE_HEADERS)
    del head.headers["content-length"]
    return head


def _links(run_id: str) -> dict[str, str]:
    base = f"/v1/runs/{run_id}"
    names = ("agents", "items", "results", "report", "events", "approvals", "cancel")
    return {"self": base, **{name: f"{base}/{name}" for name in names}}


async def _read_body(request: Request) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise _BodyTooLarge
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise _BodyTooLarge
        chunks.append(chunk)
    return b"".join(chunks)


class _Api:
    def __init__(self, manager: RunManager) -> None:
        self._manager = manager
        self._store = manager.store
        self._replayed: dict[str, EventLog] = {}
        self._openapi = openapi_document()

    async def healthz(self, request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def openapi(self, request: Request) -> Response:
        return JSONResponse(self._openapi)

    async def runs(self, request: Request) -> Response:
        return await (self.submit if request.method == "POST" else self.list_runs)(request)

    async def submit(self, request: Request) -> Response:
        try:
            body = await _read_body(request)
        except _BodyTooLarge:
            return _error(413, f"the body is over {MAX_BODY_BYTES} bytes")
        try:
            run = RUN_REQUEST.validate_json(body)
        except ValidationError as exc:
            errors = json.loads(exc.json(include_url=False, include_input=False))
            return _error(422, f"invalid run request: {_first_problem(errors)}", errors=errors)
        try:
            run_id = await self._manager.submit(run, request.headers.get("idempotency-key"))
        except QueueFull as exc:
            headers = {"Retry-After": str(exc.retry_after)}
            return JSONResponse({"error": str(exc)}, status_code=429, headers=headers)
        except InvalidInput as exc:
            return _error(422, str(exc))
        except CorralError as exc:  # the server failed, not the request: say what failed
            return _error(500, str(exc))
        status = await self._manager.status(run_id) or "queued"
        return JSONResponse(
            {"id": run_id, "status": status, "links": _links(run_id)},
            status_code=202,
            headers={"Location": f"/v1/runs/{run_id}"},
        )

    async def list_runs(self, request: Request) -> Response:
        wanted = request.query_params.get("status")
        shown: dict[str, dict[str, Any]] = {}
        for record in await self._store.list_runs():
            shown[record.run_id] = await self._summary(record.run_id, record)
        for entry in await self._manager.listed_entries(shown):
            if entry.run_id not in shown:
                shown[entry.run_id] = await self._summary(entry.run_id, None)
        runs = [r for r in shown.values() if wanted is None or r["status"] == wanted]
        try:
            return JSONResponse(page_of(runs, request.query_params))
        except BadPage as exc:
            return _error(422, str(exc))

    async def get_run(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]
        record = await self._store.get_run(run_id)
        if record is None and await self._manager.known(run_id, record) is None:
            return _error(404, f"no run {run_id}")
        summary = await self._summary(run_id, record)
        if record is not None:
            totals = (await read_status(self._store, run_id)).totals()
            summary["items"] = totals["items"]
            summary["agents"] = totals["agents"]
            summary["tokens"] = {k: v for k, v in totals.items() if k.endswith("_tokens")}
            summary["cost_usd"] = totals["cost_usd"]
        return JSONResponse(summary)

    async def agents(self, request: Request) -> Response:
        status = await self._status_json(request)
        if isinstance(status, Response):
            return status
        return JSONResponse({"agents": status["agents"]})

    async def items(self, request: Request) -> Response:
        status = await self._status_json(request)
        if isinstance(status, Response):
            return status
        return JSONResponse({"items": status["items"]})

    async def results(self, request: Request) -> Response:
        status = await self._status_json(request)
        if isinstance(status, Response):
            return status
        keys = ("index", "status", "result", "error")
        return JSONResponse({"results": [{k: i[k] for k in keys} for i in status["items"]]})

    async def report(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]
        record = await self._store.get_run(run_id)
        if record is None and self._manager.get(run_id) is None:
            return _error(404, f"no run {run_id}")
        if record is not None and record.kind in _WITHOUT_REPORT:
            return _error(
                404,
                f"run {run_id} ({record.kind}) keeps no report: review, triage and refactor runs "
                f"do; read /v1/runs/{run_id}/results",
            )
        if record is None or "report" not in record.summary:
            return _error(
                404, f"run {run_id} has no report (yet); pipeline runs keep one when done"
            )
        return JSONResponse({"report": record.summary["report"]})

    async def cancel(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]
        entry = await self._manager.cancel(run_id)
        if entry is None:
            return _error(404, f"no run {run_id} is executing on this server")
        status = await self._manager.status_of(entry)
        return JSONResponse({"id": run_id, "status": status, "links": _links(run_id)}, 202)

    async def retry(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]
        try:
            entry = await self._manager.retry_failed(run_id)
        except QueueFull as exc:
            headers = {"Retry-After": str(exc.retry_after)}
            return JSONResponse({"error": str(exc)}, status_code=429, headers=headers)
        except RunBusy as exc:
            return _error(409, str(exc))
        except InvalidInput as exc:
            return _error(422, str(exc))
        if entry is None:
            return _error(404, f"no run {run_id}")
        status = await self._manager.status_of(entry)
        return JSONResponse({"id": run_id, "status": status, "links": _links(run_id)}, 202)

    async def events(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]
        try:
            after = parse_cursor(
                request.headers.get("last-event-id"), request.query_params.get("starting_after")
            )
        except ValueError:
            return _error(400, "Last-Event-ID and starting_after must be whole numbers >= 0")
        log = await self._log_of(run_id)
        if log is None:
            return _error(404, f"no run {run_id}")
        resumed = request.headers.get("last-event-id") is not None
        if is_over(log, after, resumed=resumed):  # the SSE spec's way to say "do not reconnect"
            return Response(status_code=204, headers=SSE_HEADERS)
        if request.method == "HEAD":  # a stream would hold the connection until the run ends
            return _stream_head()
        refresh: Callable[[], Awaitable[None]] | None = None
        waiter: Callable[[], anyio.Event] | None = None
        if self._manager.get(run_id) is None and not log.ended:
            refresh = partial(log.read_to_end, self._store, run_id)
            waiter = partial(self._manager.wakeups.waiter, run_id)
        stream = event_stream(run_id, log, after, refresh=refresh, waiter=waiter)
        return StreamingResponse(stream, media_type="text/event-stream", headers=SSE_HEADERS)

    async def _log_of(self, run_id: str) -> EventLog | None:
        """The run's log: its tailer's, or one shared by the streams of a run this server
        does not execute (which they keep reading from the journal until it ends)."""
        entry = self._manager.get(run_id)
        if entry is not None:
            return entry.log
        record = await self._store.get_run(run_id)
        cached = self._replayed.get(run_id)
        if record is None:
            return cached
        # A run resumed elsewhere after it ended gets a fresh log that follows it again.
        if cached is not None and not (cached.ended and record.status in OPEN_STATUSES):
            return cached
        log = EventLog()
        await log.read_to_end(self._store, run_id)
        self._replayed[run_id] = log
        return log

    async def _status_json(self, request: Request) -> dict[str, Any] | Response:
        run_id = request.path_params["run_id"]
        entry = self._manager.get(run_id)
        if await self._store.get_run(run_id) is None:
            if entry is None:
                return _error(404, f"no run {run_id}")
            return {"agents": [], "items": []}
        return (await read_status(self._store, run_id)).to_json()

    async def _summary(self, run_id: str, record: RunRecord | None) -> dict[str, Any]:
        entry = self._manager.get(run_id)
        if entry is not None:
            status = await self._manager.status_of(entry)
        else:
            status = record.status if record is not None else "unknown"
        kind = record.kind if record is not None else entry.request.kind if entry else "unknown"
        # When the run was submitted here, which stays put (the journal's record is written when
        # the run starts), so the run list's order and its pages do not shift under a client.
        created = entry.created_at if entry else record.created_at if record is not None else 0
        summary: dict[str, Any] = {"id": run_id, "kind": kind, "status": status}
        summary["created_at"] = created
        if entry is not None and entry.error is not None:
            summary["error"] = entry.error
        summary["links"] = _links(run_id)
        return summary
