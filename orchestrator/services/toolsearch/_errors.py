"""Errors of tool search, under corral's roots::

    CorralError
    └── InvalidInput
        ├── EmptyQuery       a search without words: tool_search and `corral tools search`
        ├── CatalogInvalid   a catalog folder or file that cannot be read as tools
        └── NoToolsToSearch  no MCP servers configured and no catalog given

The model never sees these as exceptions: `tool_search` answers a failed `ToolOutput`.
"""

from __future__ import annotations

from corral.tools import InvalidInput

EMPTY_QUERY_MESSAGE = "tool_search needs a query: describe what you want to do"


class EmptyQuery(InvalidInput):
    """The query is empty or blank."""

    def __init__(self) -> None:
        super().__init__(EMPTY_QUERY_MESSAGE)


class CatalogInvalid(InvalidInput):
    """A tool catalog folder or file is missing or malformed; the message names it."""


class NoToolsToSearch(InvalidInput):
    """There is nothing to index: no MCP servers and no catalog."""
