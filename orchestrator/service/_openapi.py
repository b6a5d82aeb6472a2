"""The OpenAPI document served at `/openapi.json`, generated from the same pydantic models.

Only the run request is modelled in detail; the other answers are described in words, since they
are the journal's own JSON (`corral status --json` shows the same shapes).
"""

from __future__ import annotations

from typing import Any

from pydantic.json_schema import models_json_schema

from ._approval_routes import ApprovalAnswer
from ._models import ExecRequest, FanoutRequest, RefactorRequest, ReviewRequest, TriageRequest
from .dashboard import dashboard_paths

VERSION = "0.1.0"
REQUEST_MODELS = (ExecRequest, FanoutRequest, ReviewRequest, RefactorRequest, TriageRequest)


def openapi_document() -> dict[str, Any]:
    _, schema = models_json_schema(
        [(model, "validation") for model in (*REQUEST_MODELS, ApprovalAnswer)],
        ref_template="#/components/schemas/{model}",
    )
    request = {
        "oneOf": [{"$ref": f"#/components/schemas/{m.__name__}"} for m in REQUEST_MODELS],
        "discriminator": {"propertyName": "kind"},
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "corral", "version": VERSION},
        "components": {
            "schemas": schema.get("$defs", {}),
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "session": {"type": "apiKey", "in": "cookie", "name": "corral_session"},
            },
        },
        "security": [{"bearer": []}, {"session": []}],
        "paths": _paths(request),
    }


def _paths(request: dict[str, Any]) -> dict[str, Any]:
    def answer(text: str) -> dict[str, Any]:
        return {"responses": {"200": {"description": text}}}

    submit = {
        "parameters": [_IDEMPOTENCY_KEY],
        "requestBody": {"required": True, "content": {"application/json": {"schema": request}}},
        "responses": {
            "202": {"description": "accepted: {id, status, links}"},
            "413": {"description": "body too large"},
            "422": {
                "description": "invalid request (with the pydantic errors); a request past the "
                "server's [service] allow-lists (base_url, cd, repo, sandbox, config overrides), "
                "with the rule that refused it; or an Idempotency-Key used for another request"
            },
            "429": {"description": "queue full; see Retry-After"},
        },
    }
    events = {
        "parameters": [_LAST_EVENT_ID, _STARTING_AFTER],
        "responses": {
            "200": {"description": "text/event-stream of journal events, live until the run ends"},
            "204": {"description": "the stream has ended and the client has seen all of it"},
            "400": {"description": "a cursor that is not a whole number >= 0"},
            "404": {"description": "no such run"},
        },
    }
    run = "/v1/runs/{run_id}"
    return {
        "/healthz": {"get": {**answer("the server is up"), "security": []}},
        "/v1/runs": {
            "post": submit,
            "get": answer("runs, oldest first, filtered by ?status=, paged by ?limit= and ?after="),
        },
        run: {"get": answer("status, item counts, tokens, cost")},
        f"{run}/agents": {"get": answer("the run's agents")},
        f"{run}/items": {"get": answer("the run's items")},
        f"{run}/results": {"get": answer("each item's result")},
        f"{run}/events": {"get": events},
        f"{run}/report": {"get": answer("a pipeline run's report (404 until it has one)")},
        f"{run}/cancel": {"post": {"responses": {"202": {"description": "cancelled"}}}},
        f"{run}/retry": {"post": _retry()},
        f"{run}/approvals": {"get": answer("the run's approvals, filtered by ?state=")},
        "/v1/approvals/{approval_id}": {"post": _answer_approval()},
        **dashboard_paths(),
    }


_IDEMPOTENCY_KEY = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": "the same key with the same body returns the first run; with another body, 422",
    "schema": {"type": "string", "maxLength": 255},
}
_LAST_EVENT_ID = {
    "name": "Last-Event-ID",
    "in": "header",
    "required": False,
    "description": "resume after this event id",
    "schema": {"type": "integer", "minimum": 0},
}
_STARTING_AFTER = {**_LAST_EVENT_ID, "name": "starting_after", "in": "query"}


def _retry() -> dict[str, Any]:
    return {
        "description": "run a fan-out's failed items again with fresh agents, keeping the done",
        "responses": {
            "202": {"description": "accepted: {id, status, links}"},
            "404": {"description": "no such run"},
            "409": {"description": "the run is still executing"},
            "422": {"description": "not a fan-out run"},
            "429": {"description": "queue full; see Retry-After"},
        },
    }


def _answer_approval() -> dict[str, Any]:
    body = {"$ref": "#/components/schemas/ApprovalAnswer"}
    return {
        "requestBody": {"required": True, "content": {"application/json": {"schema": body}}},
        "responses": {
            "200": {"description": "the approval, answered"},
            "404": {"description": "no such approval"},
            "409": {"description": "already answered, or past its deadline"},
            "422": {"description": "invalid body"},
            "503": {"description": "the executor holding the run (Temporal) cannot be reached"},
        },
    }
