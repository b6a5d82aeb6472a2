"""A fan-out started again under an unfinished run's id carries it on; other inputs are refused."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import CorralConfig, open_sqlite_store
from corral.orchestrator.fanout import FanoutInputError, run_fanout
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.runs import FanoutJob, RunSetup, WorkerTemplate, journal_path
from tests._fanout import SCHEMA, item_of, outputs, report

from .test_fanout_report import TEMPLATE

pytestmark = pytest.mark.anyio

WAIT = 20.0


class StallItem:
    """Answers every item; item `held`'s first request waits until the test lets it go."""

    def __init__(self, held: int) -> None:
        self.held = held
        self.reached = anyio.Event()
        self.release = anyio.Event()
        self.first_requests: Counter[int] = Counter()

    async def __call__(self, request: dict[str, Any]) -> Any:
        item = item_of(request)
        if not outputs(request):
            self.first_requests[item] += 1
            if item == self.held and not self.release.is_set():
                self.reached.set()
                await self.release.wait()
            return report({"n": item})
        return "reported"


async def fan_out(config: CorralConfig, tmp_path: Path, items: list[dict[str, Any]]) -> Any:
    return await run_fanout(
        config,
        FanoutJob(
            items=tuple(items),
            template=TEMPLATE,
            result_schema=SCHEMA,
            cwd=tmp_path,
            concurrency=1,
            run_id="run-again",
            worker=WorkerTemplate(tools=()),
        ),
        RunSetup(env={}),
    )


async def test_the_same_fanout_started_again_by_id_finishes_without_redoing_items(
    tmp_path: Path,
) -> None:
    policy = StallItem(held=1)
    items = [{"n": n} for n in range(3)]
    async with serve_model_server(policy) as server:
        config = CorralConfig(home=tmp_path / "home", base_url=server.base_url)
        async with anyio.create_task_group() as tg:
            tg.start_soon(fan_out, config, tmp_path, items)
            with anyio.fail_after(WAIT):
                await policy.reached.wait()
            tg.cancel_scope.cancel()
        async with open_sqlite_store(journal_path(config)) as store:
            stopped = await store.get_run("run-again")
        policy.release.set()
        with anyio.fail_after(WAIT):
            outcome = await fan_out(config, tmp_path, items)
    assert stopped is not None and stopped.status == "interrupted"
    assert [(i.status, i.result) for i in outcome.items] == [("done", {"n": n}) for n in range(3)]
    assert policy.first_requests[0] == 1, "the item done before the stop is not asked again"
    assert policy.first_requests[2] == 1


async def test_another_fanout_under_a_taken_run_id_is_refused_naming_the_way_out(
    tmp_path: Path,
) -> None:
    policy = StallItem(held=-1)
    async with serve_model_server(policy) as server:
        config = CorralConfig(home=tmp_path / "home", base_url=server.base_url)
        with anyio.fail_after(WAIT):
            await fan_out(config, tmp_path, [{"n": 0}])
            with pytest.raises(FanoutInputError, match="run id run-again is taken") as refused:
                await fan_out(config, tmp_path, [{"n": 5}])
    assert "corral resume run-again" in str(refused.value)
