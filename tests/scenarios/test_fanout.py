"""Fan-outs on each executor: every item's result, in item order, in the results file, and an
item whose worker never reports failed with the reason."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import CorralConfig, open_sqlite_store
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.runs import FanoutJob
from tests._scripted import call, outputs, texts

from ._seam import WAIT, Seam

pytestmark = pytest.mark.anyio

SCHEMA = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "words": {"type": "integer"}},
    "required": ["title", "words"],
}
TEMPLATE = 'Count the words of "{title}".'
_TASK = re.compile(r'Count the words of "([^"]*)"')


def word_counter(request: dict[str, Any]) -> Any:
    """Reports the word count of the title in its task, except for titles saying 'silent'."""
    if outputs(request):
        return "counted"
    (title,) = set(_TASK.findall("\n".join(text for _, text in texts(request))))
    if "silent" in title:
        return "I would rather not say."
    return [call("report", "report_result", {"title": title, "words": len(title.split())})]


async def fan_out(executor: Seam, tmp_path: Path, *titles: str) -> Any:
    home, cwd, run_id = tmp_path / "home", tmp_path / "ws", executor.run_id("run-words")
    cwd.mkdir()
    job = FanoutJob(
        items=tuple({"title": t} for t in titles),
        template=TEMPLATE,
        result_schema=SCHEMA,
        cwd=cwd,
        concurrency=2,
        run_id=run_id,
        out=cwd / "results.jsonl",
    )
    async with serve_model_server(word_counter) as model:
        config = CorralConfig(home=home, base_url=model.base_url)
        async with executor.serving(config):
            with anyio.fail_after(WAIT):
                return await executor.run(job, executor.setup(run_id), config)


async def test_a_fanout_writes_every_result_in_item_order(executor: Seam, tmp_path: Path) -> None:
    titles = ("one", "two words", "now three words", "and now four words")
    outcome = await fan_out(executor, tmp_path, *titles)
    assert [(i.index, i.status) for i in outcome.items] == [(n, "done") for n in range(4)]
    lines = [json.loads(line) for line in (tmp_path / "ws/results.jsonl").read_text().splitlines()]
    assert [(line["index"], line["status"]) for line in lines] == [(n, "done") for n in range(4)]
    assert [line["result"]["words"] for line in lines] == [1, 2, 3, 4]
    assert all(line["usage"]["input_tokens"] > 0 and line["error"] is None for line in lines)
    async with open_sqlite_store(tmp_path / "home/journal.sqlite") as store:
        run = await store.get_run(outcome.run_id)
    assert run is not None and run.status == "done"


async def test_a_worker_that_never_reports_fails_its_item(executor: Seam, tmp_path: Path) -> None:
    outcome = await fan_out(executor, tmp_path, "loud title", "a silent title")
    first, second = outcome.items
    assert (first.status, first.result) == ("done", {"title": "loud title", "words": 2})
    assert (second.status, second.result) == ("failed", None)
    assert second.error == "the worker finished without calling report_result"
