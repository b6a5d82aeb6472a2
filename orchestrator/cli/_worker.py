"""`corral worker`: one worker process of a corral deployment on Temporal.

It hosts corral's workflows and activities: the shared task queue, and its own host queue for
the tools of the agents whose workspace is here. SIGTERM (or Ctrl-C) shuts it down gracefully,
letting running activities finish for a while and handing the rest back to the server.
"""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass


from ._common import load_cli_config, positive_int

_DESCRIPTION = (
    "Host corral's workflows and activities for a Temporal server: the shared task queue, and "
    "this host's own queue (corral-host-NAME) for the tools of agents whose workspace is here. "
    "SIGTERM stops it gracefully."
)


def add_parser(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "worker", help="run a corral worker for a Temporal server", description=_DESCRIPTION
    )
    parser.add_argument(
        "--temporal-address",
        metavar="HOST:PORT",
        help="the Temporal server's frontend (config: temporal.address, 127.0.0.1:7233)",
    )
    parser.add_argument(
        "--temporal-namespace", metavar="NS", help="config: temporal.namespace (default)"
    )
    parser.add_argument(
        "--task-queue", metavar="NAME", help="the shared task queue (config: temporal.task_queue)"
    )
    parser.add_argument(
        "--host-name",
        default=socket.gethostname(),
        metavar="NAME",
        help="this host's name; its tools run on queue corral-host-NAME (default: hostname)",
    )
    parser.add_argument(
        "--max-concurrent", type=positive_int, default=16, metavar="N", help="activities at once"
    )
    parser.add_argument("--cd", type=Path, help="folder whose config applies (default: here)")
    parser.add_argument(
        "-c",
        "--config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config key (TOML value)",
    )
    parser.set_defaults(handler=run)


async def run(args: argparse.Namespace) -> int:
    import anyio

    from corral.tools import InvalidInput

    from ..runs import resolve_executor_settings

    try:
        from corral.orchestrator.temporal import TemporalSettings, WorkerSettings, run_worker
    except ImportError as exc:
        raise InvalidInput(
            "corral worker needs Temporal's SDK: pip install 'corral[temporal]'"
        ) from exc
    cwd = (args.cd or Path.cwd()).resolve()
    config = load_cli_config(args, cwd)
    chosen = resolve_executor_settings(
        config, kind="temporal", address=args.temporal_address, namespace=args.temporal_namespace
    )
    queue_name = args.task_queue or chosen.task_queue
    settings = WorkerSettings(
        temporal=TemporalSettings(
            address=chosen.address, namespace=chosen.namespace, task_queue=queue_name
        ),
        host=args.host_name,
        max_concurrent=args.max_concurrent,
    )
    async with anyio.create_task_group() as tg:
        queue = await tg.start(run_worker, settings, config)
        print(
            f"corral worker: {args.host_name} polling {queue_name} and {queue} on {chosen.address}",
            file=sys.stderr,
            flush=True,
        )
    return 0
