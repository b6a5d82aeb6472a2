"""`corral serve`: the HTTP API (runs, event streams) on a local port, until Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass


from ._common import add_admission_flags, add_executor_flags, cli_executor


def add_parser(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "serve",
        help="serve the HTTP API: submit, watch and cancel runs",
        description=__doc__,
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=8420, help="port to listen on (0: any)")
    add_admission_flags(parser, when_full="get 429")
    add_executor_flags(parser)
    parser.set_defaults(handler=run)


async def run(args: argparse.Namespace) -> int:
    import anyio

    from corral.agents import load_config

    from ..service import (
        CorralService,
        ServiceLimits,
        ServiceOptions,
        ServiceOptionsError,
        ServicePolicy,
        check_bind,
        resolve_token,
    )

    if not 0 <= args.port <= 65535:
        raise ServiceOptionsError(f"--port {args.port} is not a port; use 0-65535")
    workdir = Path.cwd()
    config = load_config(cwd=workdir).config
    settings = config.service
    max_running = settings.max_running if args.max_running is None else args.max_running
    max_queued = settings.max_queued if args.max_queued is None else args.max_queued
    if max_running < 1 or max_queued < 0:
        raise ServiceOptionsError("--max-running must be >= 1 and --max-queued >= 0")
    policy = ServicePolicy.from_config(config, workdir)
    # Before anything can be written: a refused bind must leave no token for the next start.
    token = resolve_token(os.environ, config.home, host=args.host)
    check_bind(args.host, token)
    executor = cli_executor(args, config)
    if token.generated_at is not None:
        print(f"corral serve: API token (kept in {token.generated_at}): {token.value}")
    limits = ServiceLimits(
        max_running=max_running, max_queued=max_queued, on_restart=settings.on_restart
    )
    options = ServiceOptions(
        home=config.home,
        token=token.value,
        journal=config.journal.url,
        host=args.host,
        port=args.port,
        limits=limits,
        executor=executor,
        policy=policy,
    )
    async with anyio.create_task_group() as tg:
        url = await tg.start(CorralService(options).run)
        print(f"corral serve: listening on {url}", file=sys.stderr)
        print(f"corral serve: dashboard at {url}/ (sign in with the API token)", file=sys.stderr)
        sys.stderr.flush()
    return 0
