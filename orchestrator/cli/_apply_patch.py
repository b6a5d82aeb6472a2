"""`corral apply-patch`: apply a Codex-format patch from stdin to the current directory.

It is the user's own command, so it runs with full access, but like `git apply` it changes only
paths below the current folder (resolved: `../x`, `/tmp/x` and symlinks leading out are refused)
unless `--unsafe-paths` is given. It shares the whole code path of the agents' `apply_patch`
tool, all-or-nothing included. Errors reach `_main`, which prints them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "apply-patch",
        help="apply a patch read from stdin to the current directory",
        description=(
            "Apply a patch in the Codex format ('*** Begin Patch' ... '*** End Patch') read "
            "from stdin to the current directory. Either every file changes or none does."
        ),
    )
    p.add_argument(
        "--unsafe-paths",
        action="store_true",
        help="also change paths outside the current directory (as `git apply --unsafe-paths`)",
    )
    p.set_defaults(handler=run_apply_patch)


async def run_apply_patch(args: argparse.Namespace) -> int:
    import anyio

    from corral.tools import (
        PatchParseError,
        PermissionDenied,
        PermissionProfile,
        SandboxMode,
        apply_patch,
    )

    raw = await anyio.to_thread.run_sync(sys.stdin.buffer.read)
    text = _decode(raw)
    if not text.strip():
        raise PatchParseError.patch(
            "nothing on stdin; pipe a patch that starts with '*** Begin Patch', "
            "e.g. `corral apply-patch < change.patch`"
        )
    cwd = await anyio.to_thread.run_sync(Path.cwd)
    profile = PermissionProfile(sandbox=SandboxMode.FULL_ACCESS)
    confine = None if args.unsafe_paths else cwd
    try:
        result = await apply_patch(text, cwd=cwd, profile=profile, confine=confine)
    except PermissionDenied as exc:
        raise PermissionDenied(
            f"{exc}; nothing was changed (pass --unsafe-paths to change files outside it)"
        ) from exc
    print(result.summary())
    return 0


def _decode(raw: bytes) -> str:
    from corral.tools import PatchParseError

    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PatchParseError.patch(
            f"stdin is not UTF-8 text (bad byte at offset {exc.start}); save the patch as UTF-8"
        ) from exc
