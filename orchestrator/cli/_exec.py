"""`corral exec`: run one agent on a task and print its final message (or every event)."""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, TypeVar

from ._common import add_executor_flags, add_model_flags, add_output_flags, add_workspace_flags

if TYPE_CHECKING:
    from corral.tools import ToolServices

    from .._run import ToolProvider
    from ..runs import SingleOutcome

T = TypeVar("T")

ROLES = ("general", "supervisor", "reviewer", "refactorer", "triager")
"""`corral.agents.ROLES`, spelled out so that `--help` need not import the agent core; the
config's own roles are checked once the config is loaded."""


def add_parser(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "exec", help="run one agent on a task to completion", description=__doc__
    )
    add_model_flags(parser)
    add_workspace_flags(parser)
    add_executor_flags(parser)
    add_output_flags(parser)
    parser.add_argument("--json", action="store_true", help="print every event as a JSON line")
    parser.add_argument("--run-id", help="choose the run id (default: generated)")
    parser.add_argument(
        "--role",
        default="general",
        metavar="ROLE",
        help=(
            f"the agent's role: {', '.join(ROLES)}, or one of your config's "
            "[agents.roles.NAME]; a supervisor also gets the tools to spawn and manage workers"
        ),
    )
    parser.add_argument("task", metavar="TASK", help="what the agent should do")
    parser.set_defaults(handler=run)


async def run(args: argparse.Namespace) -> int:
    from corral.agents import RunnerHooks, check_role
    from corral.tools import InvalidInput

    from ..runs import ExecJob, RunSetup, StartCallback, new_id
    from ._common import cli_executor, executor_settings, load_cli_config, resolve_cwd
    from ._hooks import JsonLinesHooks, ProgressHooks, RunAnnounced

    if not args.task.strip():
        raise InvalidInput('TASK is empty; say what the agent should do, e.g. corral exec "..."')
    cwd = resolve_cwd(args.cd)
    config = load_cli_config(args, cwd)
    check_role(args.role, config.agents.roles)
    hooks: RunnerHooks = (
        JsonLinesHooks() if args.json else RunnerHooks() if args.quiet else ProgressHooks()
    )
    run_id = args.run_id or new_id("run")
    announce: StartCallback | None = None
    if not args.json:  # with --json the events carry it; stdout stays one JSON line per event
        line = f"corral exec: run {run_id} (see it with `corral status {run_id}`)"
        if executor_settings(args, config).kind == "local":
            hooks = RunAnnounced(hooks, line)  # once the run is journaled, so the id names it
        else:  # once its workflow has started: an unreachable server leaves no id behind
            announce = functools.partial(_say, line)
    setup = RunSetup(
        hooks=hooks,
        services=approval_services(),
        tool_providers=providers_for(args.role),
        on_start=announce,
    )
    job = ExecJob(task=args.task, cwd=cwd, run_id=run_id, role=args.role)
    work = cli_executor(args, config).run(job, setup, config)
    outcome = await said_how_to_resume(work, "exec", run_id)
    return report(outcome, json_mode=args.json, command="exec")


def _say(line: str, *_: object) -> None:
    print(line, file=sys.stderr, flush=True)


async def said_how_to_resume(work: Awaitable[T], command: str, run_id: str) -> T:
    """Await `work`; if Ctrl-C or SIGTERM stops it, say how to carry the run on (the journal
    keeps what was done), as `fanout` does."""
    import anyio

    try:
        return await work
    except anyio.get_cancelled_exc_class():
        print(f"corral {command}: stopped; resume with `corral resume {run_id}`", file=sys.stderr)
        raise


def providers_for(role: str) -> dict[str, ToolProvider]:
    """Run-specific tools of the root agent: the collab tools for a supervisor, else none."""
    from ..supervisor import collab_tool_providers

    return collab_tool_providers() if role == "supervisor" else {}


def approval_services() -> ToolServices:
    """Escalations are asked about at the terminal; with no terminal they are denied."""
    from corral.tools import ToolServices

    from ._approval import TerminalApprover

    return ToolServices(approver=TerminalApprover())


def report(outcome: SingleOutcome, *, json_mode: bool, command: str) -> int:
    from corral.agents import AgentStatus

    from ._approval import shown, shown_answer

    finish = outcome.finish
    if finish.status is AgentStatus.COMPLETED:
        if not json_mode:
            # On a terminal, escape sequences in the answer (a retitle, a clipboard write, a
            # cleared screen) are spelled out; a file or pipe gets the answer as written.
            message = finish.message or ""
            print(shown_answer(message) if sys.stdout.isatty() else message)
        return 0
    reason = shown(finish.error or "no reason given")
    print(
        f"corral {command}: {finish.status}: {reason} "
        f"(resume with `corral resume {outcome.run_id}`; journal: {outcome.journal})",
        file=sys.stderr,
    )
    return 1
