"""The OpenAPI document served at `/openapi.json`, generated from the same pydantic models.

Only the run request is modelled in detail; the other answers are described in words, since they
are the journal's own JSON (`corral status --json` shows the same shapes).
"""

from __future__ import annotations

from typing import Any

from pydantic.json_schema import models_json_schema

from ._models import ExecRequest, FanoutRequest

VERSION = "0.1.0"


def openapi_document() -> dict[str, Any]:
    _, schema = models_json_schema(
        [(ExecRequest, "validation"), (FanoutRequest, "validation")],
        ref_template="#/components/schemas/{model}",
    )
    request = {
        "oneOf": [
            {"$ref": "#/components/schemas/ExecRequest"},
            {"$ref": "#/components/schemas/FanoutRequest"},
        ],
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
        f"{run}/cancel": {"post": {"responses": {"202": {"description": "cancelled"}}}},
    }
