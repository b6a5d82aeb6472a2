"""`corral mcp list [--json]`: start the configured MCP servers and show their state and tools.

The servers come from the layered config (`[mcp_servers.NAME]` tables); a malformed table is a
config error that names the file and key. Each server is started as a run would start it, so a
server that never answers is shown `failed` after its `startup_timeout_sec`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._json_out import json_text

if TYPE_CHECKING:
    from ..services.mcp import McpServerStatus


def add_parser(sub: Any) -> None:
    mcp = sub.add_parser("mcp", help="the MCP servers of the config")
    commands = mcp.add_subparsers(dest="mcp_command", metavar="SUBCOMMAND", required=True)
    listing = commands.add_parser(
        "list", help="start the configured MCP servers and show each one's state and tools"
    )
    listing.add_argument("--json", action="store_true", help="print a JSON array")
    listing.add_argument(
        "-c",
        "--config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config key (TOML value), e.g. -c mcp_servers.time.enabled=false",
    )
    listing.set_defaults(handler=list_servers)


async def list_servers(args: argparse.Namespace) -> int:
    from corral.agents import load_config

    from ..services.mcp import open_mcp_manager

    config = load_config(cwd=Path.cwd(), cli_settings=args.config).config
    async with open_mcp_manager(config, enforce_required=False) as manager:
        statuses = manager.statuses()
    if args.json:
        print(json_text([status.to_json() for status in statuses]))
    else:
        print(format_statuses(statuses))
    return 0


def format_statuses(statuses: list[McpServerStatus]) -> str:
    """One block per server; a server's error text (its own words) is spelled out where a
    terminal would act on it."""
    from ._approval import shown_lines

    if not statuses:
        return "no MCP servers are configured (add an [mcp_servers.NAME] table to config.toml)"
    width = max(len(s.name) for s in statuses)
    lines: list[str] = []
    for status in statuses:
        count = f"{len(status.tools)} tool" + ("" if len(status.tools) == 1 else "s")
        lines.append(
            f"{status.name:<{width}}  {status.state.value:<10}  {status.transport:<15}  {count}"
        )
        if status.error:
            lines.append(f"  error: {status.error}")
        lines.extend(f"  {tool}" for tool in status.tools)
    return shown_lines("\n".join(lines))
