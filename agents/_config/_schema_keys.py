"""Walking the config's schema by key: which keys a table allows, whether a key holds tables.
Used to word errors (a near-miss key, an array of tables given one value)."""

from __future__ import annotations

from typing import Any, get_args, get_origin

from pydantic import BaseModel

from ._model import CorralConfig

_NOT_IN_SCHEMA = object()


def _schema_node(path: tuple[str, ...]) -> Any:
    """The type `CorralConfig` declares at `path` (a dict's values for a key inside a dict), or
    `_NOT_IN_SCHEMA`."""
    node: Any = CorralConfig
    for part in path:
        if get_origin(node) is dict:
            node = get_args(node)[1]
        elif isinstance(node, type) and issubclass(node, BaseModel) and part in node.model_fields:
            node = node.model_fields[part].annotation
        else:
            return _NOT_IN_SCHEMA
    return node


def array_of_tables(path: tuple[str, ...]) -> bool:
    """Whether the key at `path` is an array of tables (`[[hooks.PreToolUse]]`)."""
    node = _schema_node(path)
    items = [arg for arg in get_args(node) if arg is not type(None)]
    if get_origin(node) in (list, tuple) and items:
        return isinstance(items[0], type) and issubclass(items[0], BaseModel)
    return False


def field_names(path: tuple[str, ...]) -> list[str] | None:
    """The keys `CorralConfig` allows under `path`; None where any key is (inside `[prices]`,
    `env`, ...); empty where `path` is no table of the schema."""
    node = _schema_node(path)
    if isinstance(node, type) and issubclass(node, BaseModel):
        return list(node.model_fields)
    return None if get_origin(node) is dict else []
