"""The approval endpoints: list a run's approvals, answer one; thin handlers over `RunManager`
(its `ApprovalBoard` for local runs, its executor for runs on Temporal).

`GET /v1/runs/{run_id}/approvals[?state=pending|all|approved|denied|expired]` lists them;
`POST /v1/approvals/{approval_id}` with `{"decision": "approve" | "deny", "reason": ...}` answers
one: 404 for an unknown id, 409 when it was answered already or expired, 422 for a bad body,
503 when the executor holding the run cannot be asked.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from corral.tools import CorralError

from ._approvals import STATES
from ._errors import ApprovalClosed, UnknownApproval
from ._runs import RunManager

MAX_ANSWER_BYTES = 64 * 1024


class ApprovalAnswer(BaseModel):
    """The body of `POST /v1/approvals/{approval_id}`."""

    model_config = ConfigDict(extra="forbid")

    decision: Literal["approve", "deny"]
    reason: str | None = Field(default=None, max_length=4000)
    """Shown to the model on a denial; a default is used when left out."""


def approval_routes(manager: RunManager) -> list[Route]:
    handlers = _ApprovalApi(manager)
    return [
        Route("/v1/runs/{run_id}/approvals", handlers.list_approvals),
        Route("/v1/approvals/{approval_id}", handlers.answer, methods=["POST"]),
    ]


def _error(status: int, detail: str, **extra: object) -> JSONResponse:
    return JSONResponse({"error": detail, **extra}, status_code=status)


class _ApprovalApi:
    def __init__(self, manager: RunManager) -> None:
        self._manager = manager

    async def list_approvals(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]
        wanted = request.query_params.get("state", "all")
        if wanted != "all" and wanted not in STATES:
            return _error(422, f"state {wanted!r} is not one of all, {', '.join(STATES)}")
        known = self._manager.get(run_id) is not None
        if not known and await self._manager.store.get_run(run_id) is None:
            return _error(404, f"no run {run_id}")
        try:
            shown = await self._manager.list_approvals(run_id)
        except CorralError as exc:
            return _error(503, str(exc))
        return JSONResponse(
            {"approvals": [a for a in shown if wanted == "all" or a["state"] == wanted]}
        )

    async def answer(self, request: Request) -> Response:
        body = await _read_small(request)
        if body is None:
            return _error(413, f"the body is over {MAX_ANSWER_BYTES} bytes")
        try:
            answer = ApprovalAnswer.model_validate_json(body)
        except ValidationError as exc:
            errors = json.loads(exc.json(include_url=False, include_input=False))
            return _error(422, "invalid approval answer", errors=errors)
        approval_id = request.path_params["approval_id"]
        try:
            approve = answer.decision == "approve"
            shown = await self._manager.answer_approval(approval_id, approve, answer.reason)
        except UnknownApproval as exc:
            return _error(404, str(exc))
        except ApprovalClosed as exc:
            return _error(409, str(exc))
        except CorralError as exc:
            return _error(503, str(exc))
        return JSONResponse(shown)


async def _read_small(request: Request) -> bytes | None:
    """The body, or None when it is over `MAX_ANSWER_BYTES`."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            return None
        chunks.append(chunk)
    return b"".join(chunks)
