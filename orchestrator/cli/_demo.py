"""`corral demo`: one agent fixes a bug in a small project, offline, against the scripted model.

Everything is real except the model: the openai SDK talks HTTP to corral's scripted model
server, tools run in the bubblewrap sandbox, the journal is SQLite. Nothing leaves the machine.
"""

from __future__ import annotations

import argparse
import difflib
import sys
import tempfile
from pathlib import Path
from typing import Any

from agents import AgentStatus, load_config

from .._single import RunSetup, run_single_agent
from ..demo import BUGGY_SOURCE, fix_the_bug, write_demo_project
from ..model_server import serve_model_server
from ._common import ProgressHooks


def add_parser(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "demo", help="run one agent offline against the scripted model server", description=__doc__
    )
    parser.add_argument("--keep", type=Path, help="write the demo project here and keep it")
    parser.set_defaults(handler=run)


async def run(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="corral-demo-") as tmp:
        root = write_demo_project((args.keep or Path(tmp) / "shop").resolve())
        home = Path(tmp) / "home"
        async with serve_model_server(fix_the_bug) as server:
            env = {"CORRAL_HOME": str(home), "CORRAL_BASE_URL": server.base_url}
            config = load_config(cwd=root, env=env, overrides={"model": "scripted-demo"}).config
            print(f"corral demo: project {root}; model server {server.base_url}")
            setup = RunSetup(hooks=ProgressHooks(sys.stdout), env=env)
            task = "The tests fail. Find the bug and fix it."
            outcome = await run_single_agent(config, task, cwd=root, setup=setup)
            stats = server.stats()
        _print_summary(root, outcome.finish.message or outcome.finish.error or "", stats)
    return 0 if outcome.finish.status is AgentStatus.COMPLETED else 1


def _print_summary(root: Path, message: str, stats: dict[str, Any]) -> None:
    after = (root / "shop.py").read_text()
    diff = difflib.unified_diff(
        BUGGY_SOURCE.splitlines(keepends=True),
        after.splitlines(keepends=True),
        "a/shop.py",
        "b/shop.py",
    )
    print("\nchange made:")
    print("".join(diff).rstrip())
    print(f"\nagent: {message}")
    shared = stats["prefix_shared_bytes"]
    total = stats["input_bytes"]
    print(
        f"\nmodel requests: {stats['requests']['total']}; "
        f"{shared} of {total} request bytes were a cached prefix of the one before"
    )
