"""Conditional blocks in AGENTS.md files: `@if KEY=VALUE` ... `@endif`, kept or dropped.

A block's lines reach the model only when its condition holds for this project: a detected
`language`, a file that `exists` inside the project root, or the configured `environment`.
`!=` negates; blocks nest (so nesting is how two conditions combine). A malformed block (no
`@endif`, a stray `@endif`, an unknown condition) is kept verbatim and reported as a warning
naming the file and line. Reading the project is left to `ProjectFacts`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ._project_facts import ProjectFacts

IF = "@if"
ENDIF = "@endif"
MAX_DEPTH = 16
"""Blocks nest at most this deep: deeper `@if`s are malformed, so a hostile file cannot make
the parser (or the warnings) grow without bound."""

ConditionKey = Literal["language", "exists", "environment"]
KEYS: tuple[ConditionKey, ...] = ("language", "exists", "environment")
_CONDITION = re.compile(r"(?P<key>[A-Za-z_]+)\s*(?P<op>!=|=)\s*(?P<value>.*)")
_NAME = re.compile(r"[A-Za-z0-9_.+#-]{1,64}")

SHOWN_CHARS = 60
Warn = Callable[[str], None]


@dataclass(frozen=True)
class Condition:
    """One `KEY=VALUE` (or `KEY!=VALUE`) test."""

    key: ConditionKey
    value: str
    negated: bool = False

    def text(self) -> str:
        return f"{self.key}{'!=' if self.negated else '='}{self.value}"


@dataclass
class _Block:
    start: int
    """Index of the `@if` line."""
    condition: Condition | None
    fault: str | None
    children: list[_Block | int] = field(default_factory=list)
    end: int | None = None
    """Index of the `@endif` line; None while open (and for a block never closed)."""


def apply_conditions(text: str, *, path: Path, facts: ProjectFacts, warn: Warn) -> str:
    """`text` with each block kept or dropped; malformed blocks stay as written, warned."""
    if IF not in text and ENDIF not in text:
        return text
    lines = text.split("\n")

    def fault(index: int, why: str) -> None:
        warn(f"{path}:{index + 1}: {why}")

    out: list[str] = []
    _render(_parse(lines, fault), lines, out, facts, fault)
    return "\n".join(out)


def parse_condition(text: str) -> Condition | str:
    """The condition in an `@if` line's remainder, or what is wrong with it."""
    match = _CONDITION.fullmatch(text.strip())
    if match is None:
        return f"{_shown(text.strip())} is not a condition; write `@if KEY=VALUE` ({_keys()})"
    key, value = match["key"], match["value"].strip()
    if key not in KEYS:
        return f"unknown condition `{key}`; use {_keys()}"
    if not value:
        return f"`@if {key}{match['op']}` has no value"
    if key != "exists" and not _NAME.fullmatch(value):
        return f"`{key}` takes a name (letters, digits and `_.+#-`), not {_shown(value)}"
    return Condition(key=_key(key), value=value, negated=match["op"] == "!=")


def _parse(lines: list[str], fault: Callable[[int, str], None]) -> list[_Block | int]:
    top: list[_Block | int] = []
    stack: list[_Block] = []
    for index, line in enumerate(lines):
        word, rest = _directive(line)
        children = stack[-1].children if stack else top
        if word == IF:
            block = _open(index, rest, len(stack))
            children.append(block)
            stack.append(block)
        elif word == ENDIF and not rest and stack:
            stack.pop().end = index
        elif word == ENDIF:
            children.append(index)
            why = "text after `@endif`" if rest else "`@endif` without an open `@if`"
            fault(index, f"{why}; the line is sent as written")
        else:
            children.append(index)
    if stack:
        fault(stack[0].start, "`@if` without `@endif`; the rest of the file is sent as written")
        stack[0].fault = stack[0].fault or "unclosed"
    return top


def _directive(line: str) -> tuple[str, str]:
    """The line's first word and the rest, both trimmed (`@if`/`@endif` lines only matter)."""
    words = line.strip().split(None, 1)
    if not words:
        return "", ""
    return words[0], words[1].strip() if len(words) > 1 else ""


def _open(index: int, rest: str, depth: int) -> _Block:
    if depth >= MAX_DEPTH:
        return _Block(index, None, f"blocks nest more than {MAX_DEPTH} deep")
    parsed = parse_condition(rest)
    if isinstance(parsed, str):
        return _Block(index, None, parsed)
    return _Block(index, parsed, None)


def _render(
    children: list[_Block | int],
    lines: list[str],
    out: list[str],
    facts: ProjectFacts,
    fault: Callable[[int, str], None],
) -> None:
    for child in children:
        if isinstance(child, int):
            out.append(lines[child])
        elif child.condition is None or child.end is None:
            end = len(lines) - 1 if child.end is None else child.end
            out.extend(lines[child.start : end + 1])
            if child.fault != "unclosed" and child.fault is not None:
                fault(child.start, f"{child.fault}; the block is sent as written")
        elif _holds(child.condition, facts, functools.partial(fault, child.start)):
            _render(child.children, lines, out, facts, fault)


def _holds(condition: Condition, facts: ProjectFacts, warn: Warn) -> bool:
    """Whether the block is kept; a path that leaves the project is never probed, and drops
    the block whichever way the test was written."""
    if condition.key == "language":
        result: bool | None = facts.has_language(condition.value, warn)
    elif condition.key == "environment":
        result = facts.environment == condition.value
    else:
        result = facts.exists(condition.value, warn)
    return result is not None and result != condition.negated


def _shown(text: str) -> str:
    """`text` quoted for a warning: escapes for control characters (the file is anyone's, the
    warning goes to a terminal) and cut short."""
    return repr(text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "...")


def _key(name: str) -> ConditionKey:
    return next(key for key in KEYS if key == name)


def _keys() -> str:
    return ", ".join(f"`{key}=`" for key in KEYS)
