"""`corral serve`: the HTTP API (runs, event streams) on a local port, until Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from ._common import add_admission_flags, add_executor_flags, cli_executor, service_limits


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
        ServiceOptions,
        ServiceOptionsError,
        ServicePolicy,
        check_bind,
        resolve_token,
    )

    workdir = Path.cwd()
    config = load_config(cwd=workdir).config
    limits = service_limits(args, config, error=ServiceOptionsError)
    policy = ServicePolicy.from_config(config, workdir)
    # Before anything can be written: a refused bind must leave no token for the next start.
    token = resolve_token(os.environ, config.home, host=args.host)
    check_bind(args.host, token)
    executor = cli_executor(args, config)
    if token.generated_at is not None:
        print(f"corral serve: API token (kept in {token.generated_at}): {token.value}")
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
