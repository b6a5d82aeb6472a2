"""corral's MCP tools in process: start a fan-out, follow it with progress, page its results."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from corral.agents import RunRecord, open_sqlite_store

from ..service._harness import reporter
from ._harness import WAIT, Served, answer, fanout_args, open_served, refusal

pytestmark = pytest.mark.anyio


async def test_a_fanout_answers_at_once_and_its_results_are_read_page_by_page(
    tmp_path: Path,
) -> None:
    seen: list[tuple[float, float | None]] = []

    async def note(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    async with open_served(tmp_path, reporter) as served:
        started = answer(await served.client.call_tool("corral_fanout", fanout_args(5)))
        run_id = started["run_id"]
        with anyio.fail_after(WAIT):
            status = answer(
                await served.client.call_tool(
                    "corral_status",
                    {"run_id": run_id, "wait_seconds": WAIT},
                    progress_callback=note,
                )
            )
        first = answer(
            await served.client.call_tool(
                "corral_results", {"run_id": run_id, "offset": 0, "limit": 3}
            )
        )
        second = answer(
            await served.client.call_tool(
                "corral_results", {"run_id": run_id, "offset": first["next_offset"]}
            )
        )
    assert started["links"]["results"] == f"corral://runs/{run_id}/results"
    assert status["status"] == "done" and status["items"] == {"done": 5}
    assert seen[-1] == (5, 5)
    assert [r["result"] for r in first["results"] + second["results"]] == [
        {"n": n * 10} for n in range(5)
    ]
    assert second["next_offset"] is None


async def test_a_start_repeated_with_its_idempotency_key_starts_nothing_twice(
    tmp_path: Path,
) -> None:
    args = fanout_args(2, idempotency_key="retry-1")
    async with open_served(tmp_path, reporter) as served:
        first = answer(await served.client.call_tool("corral_fanout", args))
        again = answer(await served.client.call_tool("corral_fanout", args))
        other = await served.client.call_tool("corral_fanout", {**args, "concurrency": 1})
        runs = answer(await served.client.call_tool("corral_runs", {}))
    assert again["run_id"] == first["run_id"]
    assert [run["run_id"] for run in runs["runs"]] == [first["run_id"]]
    assert "was used for a different request" in refusal(other)


async def test_status_waits_for_a_run_another_process_executes_on_the_same_journal(
    tmp_path: Path,
) -> None:
    reported = anyio.Event()
    answers: list[dict[str, object]] = []

    async def note(progress: float, total: float | None, message: str | None) -> None:
        reported.set()

    async def wait(served: Served) -> None:
        args = {"run_id": "elsewhere", "wait_seconds": WAIT}
        answers.append(
            answer(await served.client.call_tool("corral_status", args, progress_callback=note))
        )

    now = time.time()
    record = RunRecord(
        run_id="elsewhere",
        kind="fanout",
        status="running",
        created_at=now,
        updated_at=now,
        config={},
    )
    async with (
        open_served(tmp_path, reporter) as served,
        open_sqlite_store(served.home / "journal.sqlite") as store,
    ):
        await store.create_run(record)
        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(wait, served)
                await reported.wait()
                await store.update_run("elsewhere", status="done", updated_at=time.time())
    assert answers[0]["status"] == "done"
