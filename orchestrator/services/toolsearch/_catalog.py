"""Tool catalogs on disk: folders of JSON files that describe MCP tools without running them.

A catalog file holds a list of `{"server", "name", "description", "parameters"}` objects, where
`parameters` maps each argument name to its description. Exposed names follow the MCP naming
rule (`mcp__<server>__<tool>`, at most 64 bytes, a hash suffix where names collide); for live
servers the MCP manager's names are authoritative.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from ._errors import CatalogInvalid
from ._index import IndexedTool

MAX_NAME_BYTES = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_]")
_HASH_CHARS = 12


class CatalogEntry(BaseModel):
    """One tool as a catalog file states it."""

    model_config = ConfigDict(extra="ignore")

    server: str
    name: str
    description: str = ""
    parameters: dict[str, str] = {}


def load_catalog(folder: Path) -> list[IndexedTool]:
    """Every tool in the `*.json` files of `folder`, in file-name order, then file order."""
    if not folder.is_dir():
        raise CatalogInvalid(f"{folder}: no such folder; give a folder of catalog JSON files")
    files = sorted(folder.glob("*.json"))
    if not files:
        raise CatalogInvalid(f"{folder}: no catalog files (*.json) in this folder")
    entries = [entry for path in files for entry in read_catalog_file(path)]
    return indexed_tools(entries)


def read_catalog_file(path: Path) -> list[CatalogEntry]:
    """The entries of one catalog file; a malformed file is named in the error."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CatalogInvalid(f"{path}: cannot read it as JSON ({exc})") from exc
    if not isinstance(raw, list):
        raise CatalogInvalid(f"{path}: expected a JSON array of tools")
    return [_entry(path, number, item) for number, item in enumerate(raw, start=1)]


def _entry(path: Path, number: int, item: object) -> CatalogEntry:
    try:
        return CatalogEntry.model_validate(item)
    except ValidationError as exc:
        problem = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in problem["loc"]) or "the entry"
        raise CatalogInvalid(f"{path}: tool {number}: {where}: {problem['msg']}") from exc


def indexed_tools(entries: Iterable[CatalogEntry]) -> list[IndexedTool]:
    """Index entries under unique exposed names; an exact duplicate is kept once."""
    seen: set[tuple[str, str]] = set()
    taken: set[str] = set()
    tools: list[IndexedTool] = []
    for entry in entries:
        if (entry.server, entry.name) in seen:
            continue
        seen.add((entry.server, entry.name))
        name = exposed_tool_name(entry.server, entry.name, taken)
        taken.add(name)
        tools.append(
            IndexedTool(name, entry.server, entry.name, entry.description, entry.parameters)
        )
    return tools


def exposed_tool_name(server: str, tool: str, taken: Iterable[str] = ()) -> str:
    """`mcp__<server>__<tool>` with unsafe characters as `_`, at most 64 bytes, unique."""
    prefix = f"mcp__{_sanitize(server)}__"
    plain = prefix + _sanitize(tool)
    used = set(taken)
    if len(plain) <= MAX_NAME_BYTES and plain not in used:
        return plain
    attempt = 0
    while True:
        raw = f"{server}\0{tool}" if attempt == 0 else f"{server}\0{tool}\0{attempt}"
        suffix = "_" + hashlib.sha1(raw.encode()).hexdigest()[:_HASH_CHARS]
        room = MAX_NAME_BYTES - len(prefix) - len(suffix)
        candidate = (prefix + _sanitize(tool)[: max(room, 0)] + suffix)[:MAX_NAME_BYTES]
        if candidate not in used:
            return candidate
        attempt += 1


def _sanitize(part: str) -> str:
    return _UNSAFE.sub("_", part) or "_"
