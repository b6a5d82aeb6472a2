"""The canonical serialisation of a normalised request, and how much of it two requests share.

This is the server's stand-in for a provider's prompt cache: a request's bytes are its
instructions, then each tool, then each input item, one compact sorted JSON line each, so a
client that only appends to its conversation keeps the earlier bytes as an exact prefix.
"""

from __future__ import annotations

from typing import Any

from ._json import dumps


def canonical_bytes(normalised_request: dict[str, Any], *, plain: bool = False) -> bytes:
    """The UTF-8 bytes of instructions, tools and input items as sorted compact JSON lines.

    `plain`: the request was parsed as `_json.Checked` plain, so orjson may write it.
    """
    parts: list[Any] = [normalised_request.get("instructions", "")]
    parts.extend(normalised_request.get("tools") or [])
    parts.extend(normalised_request.get("input") or [])
    return b"".join([dumps(part, plain=plain, sort_keys=True) + b"\n" for part in parts])


def shared_prefix_len(a: bytes, b: bytes) -> int:
    """The length of the longest common prefix of `a` and `b`."""
    if b.startswith(a):
        return len(a)
    if a.startswith(b):
        return len(b)
    low, high = 0, min(len(a), len(b))
    # Binary search over slice comparisons: each comparison is a memcmp, so long
    # conversations cost a few dozen C-speed compares instead of a Python loop per byte.
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low
