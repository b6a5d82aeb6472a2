"""The OpenAPI document served at `/openapi.json`, generated from the same pydantic models.

Only the run request is modelled in detail; the other answers are described in words, since they
are the journal's own JSON (`corral status --json` shows the same shapes).
"""

from __future__ import annotations

from typing import Any

from pydantic.json_schema import models_json_schema

from ._approval_routes import ApprovalAnswer
from ._models import ExecRequest, FanoutRequest, RefactorRequest, ReviewRequest, TriageRequest

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
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}],
        "paths": _paths(request),
    }


def _paths(request: dict[str, Any]) -> dict[str, Any]:
    def answer(text: str) -> dict[str, Any]:
        return {"responses": {"200": {"description": text}}}

    submit = {
        "requestBody": {"required": True, "content": {"application/json": {"schema": request}}},
        "responses": {
            "202": {"description": "accepted: {id, status, links}"},
            "413": {"description": "body too large"},
            "422": {"description": "invalid request, with the pydantic errors"},
            "429": {"description": "queue full; see Retry-After"},
        },
    }
    run = "/v1/runs/{run_id}"
    return {
        "/healthz": {"get": {**answer("the server is up"), "security": []}},
        "/v1/runs": {"post": submit, "get": answer("runs, filtered by ?status=")},
        run: {"get": answer("status, item counts, tokens, cost")},
        f"{run}/agents": {"get": answer("the run's agents")},
        f"{run}/items": {"get": answer("the run's items")},
        f"{run}/results": {"get": answer("each item's result")},
        f"{run}/events": {"get": answer("text/event-stream of journal events")},
        f"{run}/report": {"get": answer("a pipeline run's report (404 until it has one)")},
        f"{run}/cancel": {"post": {"responses": {"202": {"description": "cancelled"}}}},
        f"{run}/retry": {"post": _retry()},
        f"{run}/approvals": {"get": answer("the run's approvals, filtered by ?state=")},
        "/v1/approvals/{approval_id}": {"post": _answer_approval()},
    }


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
