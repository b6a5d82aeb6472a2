"""The `view_image` tool: an image file the profile lets the agent read, shown to the model.

The path goes through the same checks and race-free opening as `read_file`; the file must be a
PNG, JPEG, GIF or WebP by its content (the name proves nothing) and within `MAX_IMAGE_BYTES`.
The image travels in `ToolOutput.images` as a data URL; the agent adds it to the conversation as
image input, in whatever form the model API takes.
"""

from __future__ import annotations

import base64
import os
from functools import partial

import anyio.to_thread
from pydantic import BaseModel, ConfigDict, Field

from . import _safe_fs as safe_fs
from ._errors import CorralError
from ._fs_common import FileToolError, describe_size, readable_path, require_file_or_dir
from ._registry import Tool, ToolContext, ToolOutput

VIEW_IMAGE = "view_image"
MAX_IMAGE_BYTES = 3 * 1024 * 1024
"""The largest image file shown: about 4 MiB as base64, the journal's default cap on one tool
output, and eight of them (the most a conversation keeps) stay well within a request."""
# The signatures that open each format; WebP is a RIFF container whose form (bytes 8-12) is WEBP.
_FORMATS: tuple[tuple[str, bytes], ...] = (
    ("image/png", b"\x89PNG\r\n\x1a\n"),
    ("image/jpeg", b"\xff\xd8\xff"),
    ("image/gif", b"GIF87a"),
    ("image/gif", b"GIF89a"),
)
_RIFF, _WEBP = b"RIFF", b"WEBP"


class ViewImageArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="The image file (PNG, JPEG, GIF or WebP) to look at.")


def view_image_tool() -> Tool[ViewImageArgs]:
    return Tool(
        name=VIEW_IMAGE,
        description=(
            "Look at an image file (PNG, JPEG, GIF or WebP, up to "
            f"{MAX_IMAGE_BYTES // (1024 * 1024)} MiB): it is added to the conversation so you"
            " can see it. Use it for screenshots, plots and diagrams on disk."
        ),
        args=ViewImageArgs,
        handler=_view_image,
        mutating=False,
        parallel=True,
        side_effects=False,
    )


async def _view_image(args: ViewImageArgs, ctx: ToolContext) -> ToolOutput:
    try:
        mime, data = await anyio.to_thread.run_sync(partial(_read_image, ctx, args.path))
    except CorralError as exc:
        return ToolOutput.error(str(exc))
    except OSError as exc:
        return ToolOutput.error(f"cannot read {args.path}: {exc.strerror or exc}")
    url = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
    text = f"The image {args.path} ({mime}, {describe_size(len(data))}) is attached below."
    return ToolOutput(text, images=(url,))


def _read_image(ctx: ToolContext, path: str) -> tuple[str, bytes]:
    resolved = readable_path(ctx, path)
    if require_file_or_dir(resolved, path) == "dir":
        raise FileToolError(f"{path} is a directory, not an image")
    with safe_fs.open_regular(resolved) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > MAX_IMAGE_BYTES:
            raise FileToolError(_too_large(path, size))
        data = handle.read(MAX_IMAGE_BYTES + 1)
    if len(data) > MAX_IMAGE_BYTES:  # it grew after the size was read
        raise FileToolError(_too_large(path, len(data)))
    return image_type(data, path), data


def image_type(data: bytes, path: str) -> str:
    """The MIME type `data` is by its signature; a clear refusal for anything else."""
    for mime, signature in _FORMATS:
        if data.startswith(signature):
            return mime
    if data[:4] == _RIFF and data[8:12] == _WEBP:
        return "image/webp"
    raise FileToolError(
        f"{path} is not a PNG, JPEG, GIF or WebP image (by its content); convert it first"
    )


def _too_large(path: str, size: int) -> str:
    return (
        f"{path} is {describe_size(size)}, over the {describe_size(MAX_IMAGE_BYTES)} limit for"
        " images; make a smaller copy (scale it down or crop it) and view that"
    )
