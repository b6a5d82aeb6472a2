"""The task template: `{field}` placeholders filled from an item, `{{` and `}}` for braces.

A placeholder may name a nested field with dots (`{repo.name}`, `{labels.0}`); a string value is
inserted as it is, any other value as compact JSON. Every item is filled before anything runs,
so a field missing from any item is reported with that item's line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._errors import TemplateError
from ._items import FanoutItem

_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")


@dataclass(frozen=True)
class Field:
    """One placeholder: the dotted name as written, and its path."""

    name: str

    @property
    def path(self) -> tuple[str, ...]:
        return tuple(self.name.split("."))


class Template:
    """A parsed template; `fill` renders it for one item."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._parts = _parse(text)

    @property
    def fields(self) -> list[str]:
        """The placeholder names, in order of first use."""
        names = [part.name for part in self._parts if isinstance(part, Field)]
        return list(dict.fromkeys(names))

    def fill(self, item: FanoutItem) -> str:
        """The text for `item`; a missing field is a `TemplateError` naming it and the line."""
        out: list[str] = []
        for part in self._parts:
            if isinstance(part, str):
                out.append(part)
                continue
            value = _lookup(item.data, part)
            if value is _MISSING:
                raise TemplateError(
                    f"the template uses {{{part.name}}} but item {item.index} ({item.source} line "
                    f"{item.line}) has no field {part.name!r}; add it or change the template"
                )
            out.append(value if isinstance(value, str) else _compact(value))
        return "".join(out)

    def fill_all(self, items: Sequence[FanoutItem]) -> list[str]:
        return [self.fill(item) for item in items]


_MISSING: Any = object()


def _parse(text: str) -> list[str | Field]:
    parts: list[str | Field] = []
    at = 0
    for match in _TOKEN.finditer(text):
        parts.append(text[at : match.start()])
        at = match.end()
        token = match.group(0)
        if token in ("{{", "}}"):
            parts.append(token[0])
        elif match.group(1) is not None:
            parts.append(_field(match.group(1), match.start(), text))
        else:
            raise TemplateError(
                f"the template has a lone {token!r} at character {match.start() + 1}; "
                f"write {token * 2!r} for a literal brace, or {{field}} for a placeholder"
            )
    parts.append(text[at:])
    return [part for part in parts if part != ""]


def _field(name: str, offset: int, text: str) -> Field:
    cleaned = name.strip()
    if not cleaned or any(not piece for piece in cleaned.split(".")):
        shown = text[offset : offset + len(name) + 2]
        raise TemplateError(
            f"the template has an empty field name in {shown!r} at character {offset + 1}; "
            "name an item field, e.g. {title}, or write {{ and }} for literal braces"
        )
    return Field(cleaned)


def _lookup(data: Any, field: Field) -> Any:
    if isinstance(data, dict) and field.name in data:
        return data[field.name]  # a key that itself contains dots
    value = data
    for key in field.path:
        if isinstance(value, dict) and key in value:
            value = value[key]
        elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        else:
            return _MISSING
    return value


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
