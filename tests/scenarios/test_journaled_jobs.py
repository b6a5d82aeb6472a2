"""A run's journal record on each executor: its kind, and its config, which is its job."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import CorralConfig, open_sqlite_store
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.runs import ExecJob

from ._seam import WAIT, Seam

pytestmark = pytest.mark.anyio


def answer(request: dict[str, Any]) -> Any:
    return "done"


async def test_an_exec_run_journals_its_job_and_reads_it_back_as_the_same_job(
    executor: Seam, tmp_path: Path
) -> None:
    home, cwd, run_id = tmp_path / "home", tmp_path / "ws", executor.run_id("run-job")
    cwd.mkdir()
    job = ExecJob(task="say done", cwd=cwd, run_id=run_id, role="general")
    async with serve_model_server(answer) as model:
        config = CorralConfig(home=home, base_url=model.base_url)
        async with executor.serving(config):
            with anyio.fail_after(WAIT):
                await executor.run(job, executor.setup(run_id), config)
    async with open_sqlite_store(home / "journal.sqlite") as store:
        run = await store.get_run(run_id)
    assert run is not None and run.kind == "exec"
    assert ExecJob.model_validate(run.config) == job
