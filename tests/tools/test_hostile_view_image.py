"""Hostile `view_image` calls: files that only claim to be images, files too large, and paths
the profile hides or that lead outside it. Each is refused with a clear message, no image."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest

from corral.tools import (
    MAX_IMAGE_BYTES,
    PermissionProfile,
    SandboxMode,
    ToolCall,
    ToolContext,
    build_core_registry,
)

from .image_support import png

pytestmark = [pytest.mark.anyio, pytest.mark.hostile]


def _layout(tmp_path: Path) -> tuple[Path, PermissionProfile]:
    workspace, outside, home = tmp_path / "ws", tmp_path / "outside", tmp_path / "home"
    for folder in (workspace, outside, home):
        folder.mkdir()
    (outside / "secret.png").write_bytes(png())
    (home / "token.png").write_bytes(png())
    (workspace / "notes.png").write_text("not an image at all\n")
    (workspace / "env.png").symlink_to("/proc/self/environ")
    (workspace / "escape.png").symlink_to(outside / "secret.png")
    (workspace / "home.png").symlink_to(home / "token.png")
    (workspace / "huge.png").write_bytes(png() + b"\0" * MAX_IMAGE_BYTES)
    os.mkfifo(workspace / "pipe.png")
    profile = PermissionProfile(
        sandbox=SandboxMode.WORKSPACE_WRITE,
        writable_roots=(workspace,),
        readable_roots=(workspace,),
        hidden_roots=(home,),
    )
    return workspace, profile


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("notes.png", "is not a PNG, JPEG, GIF or WebP image"),
        ("huge.png", "over the 3.0 MiB limit for images"),
        ("env.png", "not allowed"),
        ("/proc/self/environ", "not allowed"),
        ("escape.png", "not allowed"),
        ("../outside/secret.png", "not allowed"),
        ("home.png", "not allowed"),
        ("../home/token.png", "not allowed"),
        ("pipe.png", "is not a regular file or directory"),
        (".", "is a directory"),
    ],
)
async def test_a_hostile_image_path_is_refused_and_shows_nothing(
    tmp_path: Path, path: str, says: str
) -> None:
    workspace, profile = _layout(tmp_path)
    ctx = ToolContext(cwd=workspace, profile=profile)
    registry = build_core_registry(["view_image"])
    with anyio.fail_after(10):
        out = await registry.dispatch(ToolCall("c1", "view_image", json.dumps({"path": path})), ctx)
    assert not out.success
    assert says in out.text, out.text
    assert out.images == ()
