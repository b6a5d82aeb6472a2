"""Live progress of `corral fanout`: one redrawn line in a terminal, plain lines in a pipe.

The real CLI runs against the scripted model server; its stderr is a pseudo-terminal for the
live case (what a person sees), a pipe for the plain one (what a log file gets).
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
from pathlib import Path

import anyio
import pytest

from corral.orchestrator.model_server import serve_model_server

from ._cli import corral_argv, corral_env, run_corral
from .test_fanout import FANOUT, TEMPLATE, word_counter

pytestmark = pytest.mark.anyio

DEADLINE = 50.0


def write_items(workspace: Path, count: int) -> None:
    lines = (json.dumps({"title": f"title number {n}"}) for n in range(count))
    (workspace / "items.jsonl").write_text("\n".join(lines) + "\n")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    schema = {"type": "object", "properties": {"words": {"type": "integer"}}}
    (root / "schema.json").write_text(json.dumps(schema))
    return root


async def run_in_terminal(args: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str]:
    """Run corral with stderr on a pseudo-terminal; its exit code and all it drew there."""
    leader, follower = pty.openpty()
    process = await anyio.open_process(
        corral_argv(*args),
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=follower,
    )
    os.close(follower)
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                return
            if not chunk:
                return
            chunks.append(chunk)

    try:
        with anyio.fail_after(DEADLINE):
            await anyio.to_thread.run_sync(drain, abandon_on_cancel=True)
            code = await process.wait()
    finally:
        os.close(leader)
        if process.returncode is None:
            process.kill()
            with anyio.move_on_after(5, shield=True):
                await process.wait()
    return code, b"".join(chunks).decode(errors="replace")


async def test_a_fanout_of_200_items_redraws_one_live_line_in_a_terminal(
    workspace: Path, tmp_path: Path
) -> None:
    write_items(workspace, 200)
    async with serve_model_server(word_counter) as server:
        env = corral_env(tmp_path / "home", server.base_url, COLUMNS="200")
        env.pop("NO_COLOR", None)
        args = [*FANOUT, *TEMPLATE, "--concurrency", "16", "--run-id", "run-live"]
        code, drawn = await run_in_terminal(args, env, workspace)
    assert code == 0, drawn
    assert drawn.startswith("corral fanout: run run-live (200 items)")
    frames = [f for f in drawn.split("\r\x1b[2K") if f.startswith("corral fanout: ")]
    assert len(frames) > 3, "the line is redrawn as workers finish"
    assert all("\n" not in f.rstrip("\n") for f in frames[1:-1]), "one line, drawn in place"
    final = frames[-1]
    assert "200/200" in final and "0 running" in final
    assert "tokens · $" in final and "elapsed" in final
    assert any("running ·" in f and "left" in f for f in frames), "workers and an estimate"
    assert "\x1b[32m" in drawn, "colour on a terminal"
    assert "[1/200]" not in drawn, "no plain per-worker lines on a terminal"
    assert "200 done, 0 failed of 200 items" in drawn


async def test_no_color_and_quiet_are_honoured_in_a_terminal(
    workspace: Path, tmp_path: Path
) -> None:
    write_items(workspace, 3)
    async with serve_model_server(word_counter) as server:
        env = corral_env(tmp_path / "home", server.base_url, NO_COLOR="1")
        code, drawn = await run_in_terminal([*FANOUT, *TEMPLATE], env, workspace)
        assert code == 0, drawn
        assert "3/3" in drawn and "\x1b[3" not in drawn
        quiet_env = corral_env(tmp_path / "home2", server.base_url)
        code, quiet = await run_in_terminal([*FANOUT, *TEMPLATE, "--quiet"], quiet_env, workspace)
    assert code == 0, quiet
    assert "\x1b[2K" not in quiet and "elapsed" not in quiet
    assert "corral fanout: run " in quiet and "3 done, 0 failed of 3 items" in quiet


async def test_piped_progress_is_one_plain_line_per_finished_worker(
    workspace: Path, tmp_path: Path
) -> None:
    write_items(workspace, 5)
    async with serve_model_server(word_counter) as server:
        env = corral_env(tmp_path / "home", server.base_url)
        result = await run_corral([*FANOUT, *TEMPLATE], env=env, cwd=workspace)
    assert result.code == 0, result.stderr
    assert "\x1b" not in result.stderr and "\r" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if "] " in line]
    assert [line.split("]")[0] for line in lines] == [f"corral fanout: [{n}/5" for n in range(1, 6)]
    assert all(" completed · " in line and " tokens · " in line for line in lines)
