"""`corral resume`: replay a run's (or an agent's) journal and carry it on to its end."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from . import _fanout
from ._common import (
    add_executor_flags,
    check_journal_writable,
    executor_settings,
    positive_int,
    resolve_cwd,
)
from ._exec import approval_services, report, said_how_to_resume

CARRIED_ON_HERE = (
    "it carries runs on from the journal in this process (a run on Temporal is durable "
    "there and needs no resume while its workers run)"
)


def add_parser(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "resume", help="carry on a run or agent that was stopped", description=__doc__
    )
    parser.add_argument("target", metavar="RUN_OR_AGENT", help="a run id or an agent id")
    parser.add_argument(
        "message", metavar="MESSAGE", nargs="?", help="a follow-up task for a finished agent"
    )
    parser.add_argument("--cd", type=Path, help="with MESSAGE: continue in this directory")
    parser.add_argument("--base-url", help="reach the model at another endpoint than before")
    parser.add_argument(
        "--model",
        help="carry on with this model; the agents are told of the switch (not for fan-outs)",
    )
    parser.add_argument("--json", action="store_true", help="print every event as a JSON line")
    parser.add_argument(
        "--retry-failed",
        action="store_true",
        help="fan-outs: run the failed items again with fresh agents (done items are kept)",
    )
    parser.add_argument(
        "--processes",
        type=positive_int,
        metavar="N",
        help="fan-outs: worker processes for the items left, as `fanout --processes` (default: "
        "chosen from the cores and the items left)",
    )
    parser.add_argument("-c", "--config", action="append", default=[], metavar="KEY=VALUE")
    add_executor_flags(parser)
    parser.set_defaults(handler=run, late_positional="message")


async def run(args: argparse.Namespace) -> int:
    from corral.agents import RunnerHooks, load_config
    from corral.tools import InvalidInput

    from ..fanout import find_fanout_run
    from ..runs import RunSetup, refuse_remote, resume_single
    from ..supervisor import collab_tool_providers
    from ._hooks import JsonLinesHooks, ProgressHooks

    config = load_config(cwd=Path.cwd(), cli_settings=args.config).config
    check_journal_writable(config)
    refuse_remote(executor_settings(args, config), "resume", CARRIED_ON_HERE)
    fanout_run = await find_fanout_run(config, args.target)
    if fanout_run is not None:
        if args.model is not None:
            raise InvalidInput(
                f"{args.target} is a fan-out run: its workers keep their model; drop --model"
            )
        return await _fanout.resume(args, config, fanout_run)
    if args.retry_failed:
        raise InvalidInput(
            f"{args.target} is not a fan-out run: only fan-outs have failed items to run again; "
            "drop --retry-failed"
        )
    if args.processes is not None:
        raise InvalidInput(
            f"{args.target} is not a fan-out run: only a fan-out's items run in several "
            "processes; drop --processes"
        )
    hooks: RunnerHooks = JsonLinesHooks() if args.json else ProgressHooks()
    cwd = resolve_cwd(args.cd) if args.cd is not None else None
    outcome = await said_how_to_resume(
        resume_single(
            config,
            args.target,
            # Every run may hold workers; a tool is built only for agents whose spec names it.
            setup=RunSetup(
                hooks=hooks, services=approval_services(), tool_providers=collab_tool_providers()
            ),
            base_url=args.base_url,
            message=args.message,
            cwd=cwd,
            model=args.model,
        ),
        "resume",
        args.target,
    )
    return report(outcome, json_mode=args.json, command="resume")
