"""`corral trust [DIR]`: let a project's `.corral/config.toml` widen power, as it reads now.

Writes `[projects."/folder"] trust_level = "trusted"` with the fingerprint of the project's
widening keys into the user's own `$CORRAL_HOME/config.toml` (nothing else in it changes);
`--revoke DIR` removes the entry and `--list` shows every entry and whether it still holds.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass


_SHOWN = {"trusted": "trusted", "changed": "changed since trusted", "untrusted": "not trusted"}


def add_parser(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "trust",
        help="trust a project's .corral/config.toml to widen power (sandbox, MCP servers, ...)",
        description=__doc__,
    )
    parser.add_argument(
        "dir", metavar="DIR", nargs="?", type=Path, help="the project (default: this folder)"
    )
    actions = parser.add_mutually_exclusive_group()
    actions.add_argument("--list", action="store_true", help="list the trusted projects")
    actions.add_argument(
        "--revoke", action="store_true", help="stop trusting DIR (default: this folder)"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from corral.agents import list_trust, trust_folder, trust_target, user_config_file, write_trust

    env, cwd = os.environ, Path.cwd()
    if args.list:
        for entry in list_trust(env, cwd):
            print(f"{_SHOWN[entry.verdict]:<22} {entry.folder}")
        return 0
    user_file = user_config_file(env, cwd)
    if args.revoke:
        folder = trust_folder(args.dir or cwd, env)
        write_trust(user_file, folder, None)
        print(f"corral trust: {folder} is not trusted ({user_file})")
        return 0
    target = trust_target(args.dir or cwd, env)
    write_trust(user_file, target.folder, target.fingerprint)
    source = target.file or "no .corral/config.toml yet"
    print(f"corral trust: trusted {target.folder} as it is now ({source}), in {user_file}")
    return 0
