"""Model-visible names of MCP tools: `mcp__<server>__<tool>`, valid for both model APIs.

Each part keeps the characters the APIs allow (`[A-Za-z0-9_-]`; others become `_`) and the whole
name fits in 64 bytes. A name that had to be cut, or that would collide with one already given
out, ends in `_` and the first 12 hex digits of the SHA-1 of the raw `mcp__<server>__<tool>`,
so the result depends only on the names, never on timing. Names are never taken back: a tool
keeps its name across refetches and restarts (`NameBook`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

MAX_NAME_BYTES = 64
HASH_CHARS = 12
PREFIX = "mcp__"
DELIMITER = "__"

_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_-]")


def sanitize_part(raw: str) -> str:
    """`raw` with every character outside `[A-Za-z0-9_-]` replaced by `_` (`_` if empty)."""
    return _NOT_ALLOWED.sub("_", raw) or "_"


def hash_suffix(seed: str) -> str:
    return "_" + hashlib.sha1(seed.encode()).hexdigest()[:HASH_CHARS]


def namespaces(servers: Iterable[str]) -> dict[str, str]:
    """`mcp__<server>__` for each server, in sorted order; a clash adds a hash of the raw name."""
    taken: set[str] = set()
    result: dict[str, str] = {}
    for server in sorted(servers):
        part = sanitize_part(server)
        if part in taken:
            part += hash_suffix(server)
        taken.add(part)
        result[server] = f"{PREFIX}{part}{DELIMITER}"
    return result


def qualify(namespace: str, server: str, tool: str, taken: set[str]) -> str:
    """The exposed name of `tool` under `namespace`, unique against `taken` (not modified)."""
    plain = namespace + sanitize_part(tool)
    if len(plain) <= MAX_NAME_BYTES and plain not in taken:
        return plain
    raw = f"{PREFIX}{server}{DELIMITER}{tool}"
    attempt = 0
    while True:
        suffix = hash_suffix(raw if attempt == 0 else f"{raw}\0{attempt}")
        name = plain[: MAX_NAME_BYTES - len(suffix)] + suffix
        if name not in taken:
            return name
        attempt += 1


class NameBook:
    """Gives each (server, tool) one exposed name for the life of the manager."""

    def __init__(self, servers: Iterable[str]) -> None:
        self._namespaces = namespaces(servers)
        self._names: dict[tuple[str, str], str] = {}
        self._taken: set[str] = set()

    def name(self, server: str, tool: str) -> str:
        key = (server, tool)
        found = self._names.get(key)
        if found is None:
            found = qualify(self._namespaces[server], server, tool, self._taken)
            self._names[key] = found
            self._taken.add(found)
        return found

    def names_for(self, server: str, tools: Iterable[str]) -> dict[str, str]:
        """Exposed names for `tools` of `server`, new ones handed out in sorted order."""
        return {tool: self.name(server, tool) for tool in sorted(tools)}
