"""The configuration reference as Markdown, written from the config model itself.

The docs site renders it at build time (`docs/hooks.py`), so the reference lists exactly the keys
`CorralConfig` accepts, with their types, defaults and docstrings, which of them apply from an
untrusted project (`_trust`), and the Codex keys corral skips (`_codex`): it cannot drift.
"""

from __future__ import annotations

import json
import re
import types
from enum import Enum
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from ._codex import _TOOLS_TURNED_OFF as TOOLS_TURNED_OFF
from ._codex import IGNORED_IN, IGNORED_TOP, PROVIDER_KEYS
from ._model import CorralConfig
from ._trust import CHECK_WORDS, CHECKED_KEYS, SAFE_KEYS

_HIDDEN = frozenset({"home", "key_endpoints"})  # set by the loader, never by a file


def render_reference() -> str:
    """The whole reference: one table per TOML table, then the Codex keys corral skips."""
    sections = [_table("Top level", "", CorralConfig)]
    sections += [
        _table(f"[{name}]", f"{name}.", model) for name, model in _section_models(CorralConfig)
    ]
    return "\n\n".join([*sections, _codex_section()]) + "\n"


def _section_models(model: type[BaseModel]) -> list[tuple[str, type[BaseModel]]]:
    found: list[tuple[str, type[BaseModel]]] = []
    for name, field in model.model_fields.items():
        inner, is_map = _unwrap(field.annotation)
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            label = f"{name}.NAME" if is_map else name
            found.append((label, inner))
            found += [(f"{label}.{sub}", m) for sub, m in _section_models(inner)]
    return found


def _table(title: str, prefix: str, model: type[BaseModel]) -> str:
    doc = _clean(model.__doc__ or "")
    rows = ["| key | type | default | untrusted project | what it does |", "|---|---|---|---|---|"]
    for name, field in model.model_fields.items():
        inner, _ = _unwrap(field.annotation)
        if name in _HIDDEN or (isinstance(inner, type) and issubclass(inner, BaseModel)):
            continue
        dotted = prefix + name
        cells = [f"`{name}`", _type(field.annotation), _default(field), _trust(dotted), _doc(field)]
        rows.append("| " + " | ".join(cells) + " |")
    return f"## {title}\n\n{doc}\n\n" + "\n".join(rows)


def _codex_section() -> str:
    inside = "; ".join(
        f"`[{'.'.join(p.replace('*', 'NAME') for p in table)}]`: "
        + ", ".join(f"`{n}`" for n in sorted(names))
        for table, names in IGNORED_IN.items()
    )
    keys = ", ".join(f"`{k}`" for k in sorted(IGNORED_TOP))
    provider = ", ".join(f"`{k}`" for k in sorted(PROVIDER_KEYS))
    switches = ", ".join(f"`{'.'.join(path)} = false`" for path in sorted(TOOLS_TURNED_OFF))
    return (
        "## Codex keys corral skips\n\n"
        "These keys of Codex's `config.toml` are taken out before validation and named in one "
        "warning line per file, so a Codex config loads as it is.\n\n"
        f"Top level: {keys}.\n\nA switch that turns off a tool corral always offers is refused "
        f"instead of skipped: {switches}.\n\nInside tables corral reads: {inside}. Under "
        "`[agents]`, a "
        "table other than `roles` is a Codex role definition: it becomes "
        "`[agents.roles.NAME]` (see Roles of your own in the configuration page), or is "
        f"skipped whole. Of a `[model_providers.ID]` table corral reads {provider}."
    )


def _unwrap(annotation: Any) -> tuple[Any, bool]:
    """The model a field holds (through `X | None` and `dict[str, X]`), and whether by name."""
    if get_origin(annotation) is dict:
        return get_args(annotation)[1], True
    if _is_union(annotation):
        rest = [a for a in get_args(annotation) if a is not type(None)]
        return (rest[0], False) if len(rest) == 1 else (annotation, False)
    return annotation, False


def _is_union(annotation: Any) -> bool:
    return get_origin(annotation) in (Union, types.UnionType)


def _type(annotation: Any) -> str:
    return _type_text(annotation).replace("|", "\\|")


def _type_text(annotation: Any) -> str:
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return " | ".join(json.dumps(a) for a in args)
    if _is_union(annotation):
        return " | ".join(_type_text(a) for a in args)
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return " | ".join(json.dumps(m.value) for m in annotation)
    if origin is dict:
        return f"table of {_type_text(args[1])}"
    if origin is tuple:
        return f"array of {_type_text(args[0])}"
    names = {type(None): "unset", str: "string", int: "integer", float: "number", bool: "boolean"}
    if annotation in names:
        return names[annotation]
    return getattr(annotation, "__name__", "any").replace("Path", "path").replace("Any", "any")


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None or field.default is PydanticUndefined:
        return "required" if field.is_required() else "(computed)"
    value = field.default
    if value is None or value in ({}, ()):
        return "unset" if value is None else "empty"
    if isinstance(value, Enum):
        value = value.value
    if isinstance(value, tuple):
        value = list(value)
    return f"`{json.dumps(value, default=str)}`"


def _trust(dotted: str) -> str:
    parts = [p.replace("NAME", "*") for p in dotted.split(".")]
    if dotted in CHECK_WORDS:
        return CHECK_WORDS[dotted]
    for keys, verdict in ((SAFE_KEYS, "applies"), (CHECKED_KEYS, "if inside the project")):
        for pattern in (k.split(".") for k in keys):
            if len(pattern) <= len(parts) and _same(pattern, parts[: len(pattern)]):
                return verdict
    return "ignored"


def _same(pattern: list[str], parts: list[str]) -> bool:
    return len(pattern) == len(parts) and all(
        p in ("*", n) for p, n in zip(pattern, parts, strict=True)
    )


def _doc(field: FieldInfo) -> str:
    return _clean(field.description or "").replace("|", "\\|")


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()
