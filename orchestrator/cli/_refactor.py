"""`corral refactor`: apply one instruction across a repository with parallel workers.

The selected files are split into disjoint write sets; each worker edits its own set in its own
git worktree and branch, the check is run on each and on the merged result, and the passing
branches are merged into one result branch. The summary goes to stdout, progress to stderr;
the exit code is 0 only when every worker passed and merged.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._common import add_executor_flags, add_model_flags, positive_int

if TYPE_CHECKING:
    from corral.agents import CorralConfig

    from ..pipelines.refactor import RefactorJob, RefactorPlan, WorkerOutcome

# The pipeline's defaults, spelled out so that `--help` need not import it (a test holds them).
DEFAULT_CONCURRENCY = 4
DEFAULT_MAX_ATTEMPTS = 2

_DESCRIPTION = (
    "Apply INSTRUCTION to the tracked files of a git repository with parallel workers. The "
    "files (--files: git pathspecs, default all) are split into disjoint write sets, kept "
    "together by folder and balanced by size. Each worker gets its own git worktree and branch "
    "(corral/refactor/RUN/N), may change only its own files, and runs --check in the sandbox; "
    "corral runs the check again itself and merges the branches that pass into the result "
    "branch. Your working tree and branch are never touched. Uncommitted changes are refused."
)


def add_parser(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "refactor", help="refactor a repository with parallel workers", description=_DESCRIPTION
    )
    add_model_flags(parser)
    add_executor_flags(parser)
    parser.add_argument(
        "--repo", type=Path, required=True, metavar="DIR", help="the repository to refactor"
    )
    parser.add_argument(
        "--instruction", required=True, metavar="TEXT_OR_@FILE", help="what to change"
    )
    parser.add_argument(
        "--files",
        nargs="+",
        action="extend",
        default=[],
        metavar="GLOB",
        help="git pathspecs relative to --repo, e.g. 'src/*.py' (default: every tracked file)",
    )
    parser.add_argument(
        "--check",
        metavar="CMD",
        help="command that must pass, run by bash -c from the top of the worktree. It runs "
        "read-only in the sandbox, which sees the system folders (/usr, /etc, /lib*, /opt), the "
        "toolchains on PATH, the worktree and its git data, and nothing else: not /tmp, not your "
        "home folder, not a virtual environment outside the repository",
    )
    parser.add_argument(
        "--branch", metavar="NAME", help="result branch (default: corral/refactor/RUN/result)"
    )
    parser.add_argument(
        "--concurrency",
        type=positive_int,
        default=DEFAULT_CONCURRENCY,
        metavar="N",
        help=f"workers, at most one per folder (default {DEFAULT_CONCURRENCY})",
    )
    parser.add_argument(
        "--max-attempts",
        type=positive_int,
        default=DEFAULT_MAX_ATTEMPTS,
        metavar="N",
        help=f"agents per write set while its check fails (default {DEFAULT_MAX_ATTEMPTS})",
    )
    parser.add_argument("--run-id", help="choose the run id (default: generated)")
    parser.set_defaults(handler=run)


async def run(args: argparse.Namespace) -> int:
    import anyio

    from ..pipelines.refactor import run_refactor
    from ..runs import RunSetup
    from ._common import cli_executor

    config, request = _request(args)
    setup = RunSetup(executor=cli_executor(args, config))
    started: list[str] = []
    try:
        outcome = await run_refactor(
            config,
            request,
            setup=setup,
            on_start=lambda plan: started.append(_started(plan)),
            on_worker=_finished,
        )
    except anyio.get_cancelled_exc_class():
        if started:
            _say(f"stopped run {started[0]}; its worktrees were removed, the journal is kept")
        raise
    print(outcome.summary())
    sys.stdout.flush()
    return 0 if outcome.ok else 1


def _request(args: argparse.Namespace) -> tuple[CorralConfig, RefactorJob]:
    from ..pipelines.refactor import RefactorJob
    from ._common import load_cli_config

    repo = args.repo.expanduser()
    config = load_cli_config(args, repo if repo.is_dir() else Path.cwd())
    request = RefactorJob(
        repo=repo,
        instruction=_instruction(args.instruction),
        files=tuple(args.files),
        check=args.check,
        branch=args.branch,
        concurrency=args.concurrency,
        max_attempts=args.max_attempts,
        run_id=args.run_id,
    )
    return config, request


def _instruction(raw: str) -> str:
    """`--instruction`: the text itself, or `@FILE` for a file's contents."""
    from corral.tools import InvalidInput

    from .._input_files import read_input_file

    if not raw.startswith("@"):
        return raw
    return read_input_file(Path(raw[1:]).expanduser(), "instruction", InvalidInput)


def _started(plan: RefactorPlan) -> str:
    files = sum(len(s.files) for s in plan.write_sets)
    _say(
        f"run {plan.run_id}: {len(plan.write_sets)} workers on {files} files of {plan.repo} "
        f"at {plan.base[:12]}; worktrees in {plan.worktrees}"
    )
    return plan.run_id


def _finished(outcome: WorkerOutcome) -> None:
    why = f": {outcome.detail}" if outcome.detail else ""
    _say(f"worker {outcome.index} finished: {outcome.status}{why}")


def _say(text: str) -> None:
    print(f"corral refactor: {text}", file=sys.stderr)
    sys.stderr.flush()
