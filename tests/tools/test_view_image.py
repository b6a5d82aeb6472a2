"""`view_image`: an image on disk comes back as a data URL beside a short note."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from corral.tools import PermissionProfile, ToolCall, ToolContext, build_core_registry

from .image_support import GIF, JPEG, WEBP, png

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("name", "data", "mime"),
    [
        ("plot.png", png(), "image/png"),
        ("photo.jpg", JPEG, "image/jpeg"),
        ("anim.gif", GIF, "image/gif"),
        ("shot.webp", WEBP, "image/webp"),
        ("no-extension", png(), "image/png"),
    ],
)
async def test_each_supported_format_is_shown_as_a_data_url_of_its_type(
    tmp_path: Path, name: str, data: bytes, mime: str
) -> None:
    (tmp_path / name).write_bytes(data)
    registry = build_core_registry(["view_image"])
    ctx = ToolContext(cwd=tmp_path, profile=PermissionProfile())
    out = await registry.dispatch(ToolCall("c1", "view_image", json.dumps({"path": name})), ctx)
    assert out.success, out.text
    assert out.text.startswith(f"The image {name} ({mime}, ")
    (url,) = out.images
    prefix = f"data:{mime};base64,"
    assert url.startswith(prefix)
    assert base64.b64decode(url.removeprefix(prefix)) == data


def test_view_image_is_a_default_tool_that_only_reads() -> None:
    (tool,) = [build_core_registry(["view_image"]).get("view_image")]
    assert tool is not None
    assert (tool.mutating, tool.parallel, tool.side_effects) == (False, True, False)
