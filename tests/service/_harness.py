"""A real `corral serve` on loopback in front of the scripted model server, for the tests."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2

from corral.agents import CorralConfig, ServiceConfig
from corral.orchestrator.model_server import Policy, serve_model_server
from corral.orchestrator.service import (
    CorralService,
    ServiceLimits,
    ServiceOptions,
    ServicePolicy,
)

TOKEN = "a-test-token-that-is-long-enough"
WAIT = 20.0
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
TEMPLATE = "Item {n}: report n."
_ITEM = re.compile(r"Item (\d+):")


@dataclass
class Harness:
    url: str
    model_url: str
    http: httpx2.AsyncClient
    home: Path
    cwd: Path

    def fanout(self, count: int, **fields: Any) -> dict[str, Any]:
        """A fan-out request over items n = 0..count-1 against the scripted model."""
        return {
            "kind": "fanout",
            "items": [{"n": n} for n in range(count)],
            "template": TEMPLATE,
            "schema": SCHEMA,
            "base_url": self.model_url,
            "cd": str(self.cwd),
            **fields,
        }


def allowing_policy(
    tmp_path: Path, model_url: str, service: ServiceConfig | None = None
) -> ServicePolicy:
    """What a test server allows: its scripted model, folders under `tmp_path`, and `service`."""
    settings = service or ServiceConfig(allowed_roots=(tmp_path,))
    config = CorralConfig(base_url=model_url, service=settings, home=tmp_path / "home")
    return ServicePolicy.from_config(config, tmp_path)


@asynccontextmanager
async def open_service(
    tmp_path: Path,
    policy: Policy,
    limits: ServiceLimits | None = None,
    env: dict[str, str] | None = None,
    service: ServiceConfig | None = None,
) -> AsyncIterator[Harness]:
    home = tmp_path / "home"
    async with serve_model_server(policy) as model:
        options = ServiceOptions(
            home=home,
            token=TOKEN,
            port=0,
            limits=limits or ServiceLimits(),
            env={"CORRAL_HOME": str(home), "CORRAL_BASE_URL": model.base_url, **(env or {})},
            policy=allowing_policy(tmp_path, model.base_url, service),
        )
        async with anyio.create_task_group() as tg:
            url = await tg.start(CorralService(options).run)
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with httpx2.AsyncClient(base_url=url, headers=headers, timeout=WAIT) as http:
                yield Harness(url, model.base_url, http, home, tmp_path)
            tg.cancel_scope.cancel()


def item_of(request: dict[str, Any]) -> int:
    return int(_ITEM.findall(json.dumps(request["input"]))[-1])


def outputs(request: dict[str, Any]) -> list[str]:
    return [i["output"] for i in request["input"] if i.get("type") == "function_call_output"]


def reporter(request: dict[str, Any]) -> Any:
    """Reports n * 10 for item n, then finishes."""
    if outputs(request):
        return "reported"
    arguments = json.dumps({"n": item_of(request) * 10})
    return [{"type": "function_call", "name": "report_result", "arguments": arguments}]


class Gate:
    """A policy whose first request for each of `held` items waits until `release()`."""

    def __init__(self, held: set[int] | None = None, *, expect: int = 1) -> None:
        self.held = held
        self.opened = anyio.Event()
        self.reached = anyio.Event()
        self._expect = expect
        self._waiting = 0

    async def __call__(self, request: dict[str, Any]) -> Any:
        item = item_of(request)
        if (self.held is None or item in self.held) and not outputs(request):
            self._waiting += 1
            if self._waiting >= self._expect:
                self.reached.set()
            await self.opened.wait()
        return reporter(request)

    def release(self) -> None:
        self.opened.set()
