"""Tool search: a fielded BM25 + embedding index over MCP tools, and `tool_search` for them.

`ToolIndex` ranks plain tool descriptions; `DeferredTools` holds the MCP tools that are not sent
to the model (Codex's threshold: 100) and gives each agent a `tool_search` tool that loads what
it finds into that agent's registry. Catalog folders describe tools without running servers.
"""

from ..retrieval import Ranker as Ranker
from ._catalog import CatalogEntry as CatalogEntry
from ._catalog import exposed_tool_name as exposed_tool_name
from ._catalog import load_catalog as load_catalog
from ._catalog import read_catalog_file as read_catalog_file
from ._deferred import DEFAULT_DEFER_THRESHOLD as DEFAULT_DEFER_THRESHOLD
from ._deferred import MAX_SEARCH_LIMIT as MAX_SEARCH_LIMIT
from ._deferred import TOOL_SEARCH_NAME as TOOL_SEARCH_NAME
from ._deferred import DeferredTool as DeferredTool
from ._deferred import DeferredTools as DeferredTools
from ._deferred import ToolExposure as ToolExposure
from ._deferred import ToolSearchArgs as ToolSearchArgs
from ._deferred import indexed_tool as indexed_tool
from ._deferred import visible_tools as visible_tools
from ._errors import EMPTY_QUERY_MESSAGE as EMPTY_QUERY_MESSAGE
from ._errors import CatalogInvalid as CatalogInvalid
from ._errors import EmptyQuery as EmptyQuery
from ._errors import NoToolsToSearch as NoToolsToSearch
from ._index import DEFAULT_LIMIT as DEFAULT_LIMIT
from ._index import Hit as Hit
from ._index import IndexedTool as IndexedTool
from ._index import ToolExplanation as ToolExplanation
from ._index import ToolIndex as ToolIndex
from ._text import one_line as one_line

__all__ = [
    "DEFAULT_DEFER_THRESHOLD",
    "DEFAULT_LIMIT",
    "EMPTY_QUERY_MESSAGE",
    "MAX_SEARCH_LIMIT",
    "TOOL_SEARCH_NAME",
    "CatalogEntry",
    "CatalogInvalid",
    "DeferredTool",
    "DeferredTools",
    "EmptyQuery",
    "Hit",
    "IndexedTool",
    "NoToolsToSearch",
    "Ranker",
    "ToolExplanation",
    "ToolExposure",
    "ToolIndex",
    "ToolSearchArgs",
    "exposed_tool_name",
    "indexed_tool",
    "load_catalog",
    "one_line",
    "read_catalog_file",
    "visible_tools",
]
