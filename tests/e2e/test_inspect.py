"""`corral runs`, `corral status`, `corral export`, and a run stopped with SIGTERM."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.orchestrator.model_server import serve_model_server

from ._cli import corral_argv, corral_env, run_corral

pytestmark = pytest.mark.anyio


def answer_with_usage(request: dict[str, Any]) -> Any:
    return {
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "done"}],
            }
        ],
        "usage": {"input_tokens": 1000, "output_tokens": 50, "cached_tokens": 400},
    }


async def test_status_runs_and_export_describe_a_finished_run(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        '[prices."gpt-5.4-mini"]\n'
        "input_per_mtok = 1.0\ncached_input_per_mtok = 0.5\noutput_per_mtok = 10.0\n"
    )
    async with serve_model_server(answer_with_usage) as server:
        env = corral_env(home, server.base_url)
        done = await run_corral(["exec", "--run-id", "run-seen", "go"], env=env, cwd=tmp_path)
        assert done.code == 0, done.stderr
    runs = await run_corral(["runs", "--json"], env=env, cwd=tmp_path)
    assert [(r["run_id"], r["kind"], r["status"]) for r in json.loads(runs.stdout)] == [
        ("run-seen", "exec", "completed")
    ]
    status = await run_corral(["status", "run-seen", "--json"], env=env, cwd=tmp_path)
    report = json.loads(status.stdout)
    assert report["totals"]["input_tokens"] == 1000
    assert report["totals"]["cost_usd"] == pytest.approx((600 * 1.0 + 400 * 0.5 + 50 * 10.0) / 1e6)
    assert [a["status"] for a in report["agents"]] == ["completed"]
    human = await run_corral(["status", "run-seen"], env=env, cwd=tmp_path)
    assert "run run-seen (exec): completed" in human.stdout
    exported = await run_corral(["export", "run-seen"], env=env, cwd=tmp_path)
    kinds = [json.loads(line)["type"] for line in exported.stdout.splitlines()]
    assert kinds[0] == "run" and "agent" in kinds and "event" in kinds


async def test_status_of_an_unknown_run_says_how_to_list_runs(tmp_path: Path) -> None:
    result = await run_corral(
        ["status", "run-nope"], env=corral_env(tmp_path / "home"), cwd=tmp_path
    )
    assert result.code == 2
    assert "run-nope" in result.stderr and "corral runs" in result.stderr


async def test_sigterm_interrupts_cleanly_and_the_run_resumes(tmp_path: Path) -> None:
    reached = anyio.Event()
    release = anyio.Event()

    async def stall_once(request: dict[str, Any]) -> Any:
        if not reached.is_set():
            reached.set()
            await release.wait()
        return "finished"

    async with serve_model_server(stall_once) as server:
        env = corral_env(tmp_path / "home", server.base_url)
        argv = corral_argv("exec", "--run-id", "run-term", "go")
        process = await anyio.open_process(argv, env=env, cwd=tmp_path, stdin=subprocess.DEVNULL)
        with anyio.fail_after(30):
            await reached.wait()
            process.send_signal(signal.SIGTERM)
            code = await process.wait()
        release.set()
        assert process.stderr is not None
        stderr = (await process.stderr.receive()).decode()
        assert code == 143 and "terminated" in stderr, stderr
        status = await run_corral(["status", "run-term", "--json"], env=env, cwd=tmp_path)
        assert json.loads(status.stdout)["agents"][0]["status"] == "interrupted"
        resumed = await run_corral(["resume", "run-term"], env=env, cwd=tmp_path)
    assert resumed.code == 0, resumed.stderr
    assert resumed.stdout.strip() == "finished"
