"""What an MCP tool result tells the model: its text, with other content summarised.

Text blocks are joined with newlines; images, audio, links and binary resources become one-line
summaries (the model cannot use the bytes here); a result with only structured content is
printed as JSON. `isError` makes the output a failed one.
"""

from __future__ import annotations

import json

from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
)

from corral.tools import ToolOutput


def result_to_output(exposed_name: str, result: CallToolResult) -> ToolOutput:
    parts = [describe_block(block) for block in result.content]
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    text = "\n".join(parts)
    if result.is_error:
        return ToolOutput.error(text or f"{exposed_name} failed without saying why")
    return ToolOutput(text)


def describe_block(block: ContentBlock) -> str:
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, ImageContent):
        return f"[image: {block.mime_type}, {_decoded_size(block.data)} bytes]"
    if isinstance(block, AudioContent):
        return f"[audio: {block.mime_type}, {_decoded_size(block.data)} bytes]"
    if isinstance(block, ResourceLink):
        return f"[resource link: {block.uri}" + (f" ({block.name})]" if block.name else "]")
    if isinstance(block, EmbeddedResource):
        contents = block.resource
        if isinstance(contents, BlobResourceContents):
            mime = contents.mime_type or "binary"
            return f"[resource {contents.uri}: {mime}, {_decoded_size(contents.blob)} bytes]"
        return contents.text
    return f"[{type(block).__name__}]"


def _decoded_size(base64_data: str) -> int:
    padding = base64_data.count("=", max(0, len(base64_data) - 2))
    return len(base64_data) * 3 // 4 - padding
