"""A run's state, results and report as MCP resources: `corral://runs/{id}[/results|/report]`.

Templates name the three shapes; the resource list holds the newest runs' states, so a client
that browses finds them. A read answers JSON; an unknown run or shape is an `INVALID_PARAMS`
error naming the URI. Subscriptions are `_subscriptions`'.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

import mcp_types as types
from mcp.shared.exceptions import MCPError

from corral.tools import CorralError

from ._views import SCHEME, RunViews, run_uri

JSON: Final = "application/json"
LISTED_RUNS: Final = 50
_URI = re.compile(
    rf"^{re.escape(SCHEME)}([A-Za-z0-9][A-Za-z0-9_.-]{{0,63}})(?:/(results|report))?$"
)
MAX_RESULTS: Final = 100_000

TEMPLATES: Final = (
    types.ResourceTemplate(
        name="run",
        uri_template=f"{SCHEME}{{run_id}}",
        description="a corral run's status, item counts, tokens and cost",
        mime_type=JSON,
    ),
    types.ResourceTemplate(
        name="run results",
        uri_template=f"{SCHEME}{{run_id}}/results",
        description="every item result of a corral run, by index",
        mime_type=JSON,
    ),
    types.ResourceTemplate(
        name="run report",
        uri_template=f"{SCHEME}{{run_id}}/report",
        description="the report a review or triage run keeps when done",
        mime_type=JSON,
    ),
)


def parse_uri(uri: str) -> tuple[str, str]:
    """`(run id, part)` of a run URI (part "" for the state); `MCPError` if it is none."""
    found = _URI.match(uri)
    if found is None:
        raise MCPError(
            types.INVALID_PARAMS,
            f"unknown resource {uri[:200]!r}; corral's are {SCHEME}{{run_id}}[/results|/report]",
        )
    return found.group(1), found.group(2) or ""


async def list_resources(views: RunViews) -> types.ListResourcesResult:
    runs = (await views.runs(None, LISTED_RUNS))["runs"]
    resources = [
        types.Resource(
            name=f"{run['kind']} run {run['run_id']} ({run['status']})",
            uri=run_uri(run["run_id"]),
            mime_type=JSON,
        )
        for run in runs
    ]
    return types.ListResourcesResult(resources=resources)


async def read_resource(views: RunViews, uri: str) -> types.ReadResourceResult:
    run_id, part = parse_uri(uri)
    try:
        shown: dict[str, Any]
        if part == "results":
            shown = await views.results(run_id, 0, MAX_RESULTS)
        elif part == "report":
            shown = await views.report(run_id)
        else:
            shown = await views.state(run_id)
    except CorralError as exc:
        raise MCPError(types.INVALID_PARAMS, str(exc)) from None
    contents = types.TextResourceContents(uri=uri, mime_type=JSON, text=json.dumps(shown))
    return types.ReadResourceResult(contents=[contents])
