"""`/openapi.json` stays in step with the routes the app serves and the run kinds it accepts."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.routing import Route

from corral.agents import MemoryStore
from corral.orchestrator.service._app import build_app
from corral.orchestrator.service._entries import ServiceLimits
from corral.orchestrator.service._openapi import openapi_document
from corral.orchestrator.service._runs import RunManager
from corral.orchestrator.service._submissions import open_submission_book

from ._harness import TOKEN

pytestmark = pytest.mark.anyio


async def test_openapi_documents_every_route_and_method_the_app_serves(tmp_path: Path) -> None:
    async with open_submission_book(tmp_path) as book:
        app = build_app(RunManager(MemoryStore(), book, limits=ServiceLimits()), TOKEN)
    served = {
        (route.path, method.lower())
        for route in app.routes
        if isinstance(route, Route)
        for method in route.methods or ()
        if method != "HEAD"
    }
    documented = {(path, op) for path, ops in openapi_document()["paths"].items() for op in ops}
    assert served - {("/openapi.json", "get")} == documented


def test_openapi_offers_every_run_kind_with_its_schema() -> None:
    document = openapi_document()
    submit = document["paths"]["/v1/runs"]["post"]["requestBody"]["content"]["application/json"]
    models = [ref["$ref"].rsplit("/", 1)[-1] for ref in submit["schema"]["oneOf"]]
    schemas = document["components"]["schemas"]
    kinds = {schemas[name]["properties"]["kind"]["const"] for name in models}
    assert kinds == {"exec", "fanout", "review", "refactor", "triage"}
    assert "decision" in schemas["ApprovalAnswer"]["required"]


def test_openapi_documents_the_refusals_and_the_end_of_a_stream() -> None:
    paths = openapi_document()["paths"]
    submit, events = paths["/v1/runs"]["post"], paths["/v1/runs/{run_id}/events"]["get"]
    assert "allow-lists" in submit["responses"]["422"]["description"]
    assert "Idempotency-Key" in submit["responses"]["422"]["description"]
    assert [p["name"] for p in submit["parameters"]] == ["Idempotency-Key"]
    assert "204" in events["responses"]
    assert {p["name"] for p in events["parameters"]} == {"Last-Event-ID", "starting_after"}
