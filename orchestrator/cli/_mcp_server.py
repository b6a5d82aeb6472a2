"""`corral mcp-server`: corral's runs as MCP tools, on stdio (default) or streamable HTTP.

Over stdio the client starts it (`command = "corral"`, `args = ["mcp-server"]`); with `--http`
it listens on `--host`/`--port` at `/mcp` and wants the same API token as `corral serve`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from ._common import add_admission_flags, add_executor_flags, cli_executor, service_limits

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8421


def add_parser(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "mcp-server",
        help="serve corral's runs as MCP tools (stdio, or streamable HTTP with --http)",
        description=__doc__,
    )
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP, not stdio")
    parser.add_argument("--host", help=f"address to listen on (--http; default {DEFAULT_HOST})")
    parser.add_argument("--port", type=int, help=f"port (--http; default {DEFAULT_PORT})")
    add_admission_flags(parser, when_full="are refused")
    add_executor_flags(parser)
    parser.set_defaults(handler=run)


async def run(args: argparse.Namespace) -> int:
    import anyio

    from corral.agents import load_config

    from ..mcp_server import McpServerOptionsError, serve_http, serve_stdio
    from ..service import check_bind, resolve_token

    _listen_flags_need_http(args)
    workdir = Path.cwd()
    config = load_config(cwd=workdir).config
    limits = service_limits(args, config, error=McpServerOptionsError)
    options = _options(config, workdir, args, limits)
    if not args.http:
        await serve_stdio(options)
        return 0
    # Before anything can be written: a refused bind must leave no token for the next start.
    token = resolve_token(os.environ, config.home, host=args.host)
    check_bind(args.host, token)
    if token.generated_at is not None:
        print(f"corral mcp-server: API token (kept in {token.generated_at}): {token.value}")
    async with anyio.create_task_group() as tg:
        url = await tg.start(
            lambda task_status: serve_http(
                options, token=token.value, host=args.host, port=args.port, task_status=task_status
            )
        )
        print(f"corral mcp-server: listening on {url}", file=sys.stderr)
        sys.stderr.flush()
    return 0


def _listen_flags_need_http(args: argparse.Namespace) -> None:
    """`--port` without `--http` served stdio and ignored the port: the caller meant HTTP."""
    from ..mcp_server import McpServerOptionsError

    if not args.http and (args.host is not None or args.port is not None):
        raise McpServerOptionsError(
            "--host and --port are for HTTP: add --http to listen on them, or drop them to "
            "serve stdio"
        )
    args.host = DEFAULT_HOST if args.host is None else args.host
    args.port = DEFAULT_PORT if args.port is None else args.port


def _options(config: Any, workdir: Path, args: argparse.Namespace, limits: Any) -> Any:
    from ..mcp_server import McpServerOptions, server_policy

    return McpServerOptions(
        home=config.home,
        journal=config.journal.url,
        limits=limits,
        executor=cli_executor(args, config),
        policy=server_policy(config, workdir),
    )
