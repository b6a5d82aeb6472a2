"""`view_image` end to end: a scripted agent writes a PNG with `shell`, looks at it, and the
model server's log shows the image part, on the Responses API and on Chat Completions."""

from __future__ import annotations

import base64
import shlex
from pathlib import Path
from typing import Any

import pytest

from corral.orchestrator.model_server import serve_model_server

from .._scripted import call
from ..tools.image_support import png
from ..tools.sandbox_support import PYTHON
from ._cli import corral_env, run_corral

pytestmark = pytest.mark.anyio

IMAGE = png(4, 3)
DATA_URL = "data:image/png;base64," + base64.b64encode(IMAGE).decode()


def painter(request: dict[str, Any]) -> Any:
    """Writes the PNG, views it, then says what it saw (whether an image part arrived)."""
    done = [i for i in request["input"] if i.get("type") == "function_call_output"]
    if not done:
        code = f"import base64; open('plot.png', 'wb').write(base64.b64decode({_b64()!r}))"
        command = shlex.join([PYTHON, "-c", code])
        return [call("c1", "shell", {"command": command})]
    if len(done) == 1:
        return [call("c2", "view_image", {"path": "plot.png"})]
    return "saw it" if DATA_URL in _image_urls(request) else "no image"


def _b64() -> str:
    return base64.b64encode(IMAGE).decode()


def _image_urls(request: dict[str, Any]) -> list[str]:
    return [
        part.get("image_url", "")
        for item in request["input"]
        if item.get("type") == "message"
        for part in item["content"]
        if part.get("type") == "input_image"
    ]


@pytest.mark.parametrize("api", ["responses", "chat"])
async def test_an_agent_views_a_png_it_wrote_on_either_api(tmp_path: Path, api: str) -> None:
    async with serve_model_server(painter) as server:
        env = corral_env(tmp_path / "home", server.base_url)
        args = ["exec", "-c", f'model_provider_api="{api}"', "draw and look"]
        result = await run_corral(args, env=env, cwd=tmp_path)
        last = server.requests[-1]["body"]
    assert result.code == 0, result.stderr
    assert result.stdout.strip() == "saw it"
    if api == "responses":
        (message,) = [i for i in last["input"] if i.get("role") == "user" and _has_image(i)]
        assert message["content"] == [{"type": "input_image", "image_url": DATA_URL}]
    else:
        (message,) = [m for m in last["messages"] if m["role"] == "user" and _has_image(m)]
        assert message["content"] == [{"type": "image_url", "image_url": {"url": DATA_URL}}]


def _has_image(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any("image" in part.get("type", "") for part in content)
