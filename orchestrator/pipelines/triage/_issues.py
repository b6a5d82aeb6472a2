"""The issues to triage: what `gh issue list --json number,title,body,labels,author,createdAt`
prints (a JSON array), or the same objects one per line (JSON Lines).

Every record is checked before anything runs, and the first bad one stops everything with its
position: its index among the issues and the line it starts on. Fields beyond these are ignored,
so `gh`'s output with more `--json` fields is accepted as it is.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError

from ..._input_files import read_input_file
from ...runs import Issue
from ._errors import IssuesFileError

_SHAPE = "each issue is an object with at least a number and a title, as `gh issue list --json "
_SHAPE += "number,title,body,labels,author,createdAt` prints"
_WHITESPACE = " \t\r\n"
_UNION_MEMBERS = frozenset({"_GhName", "_GhAuthor", "str"})


class _GhName(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str


class _GhAuthor(BaseModel):
    model_config = ConfigDict(extra="allow")
    login: str


class _IssueRecord(BaseModel):
    """One record as `gh` prints it; `labels` and `author` may also be plain strings."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    number: StrictInt = Field(gt=0)
    title: str = Field(min_length=1)
    body: str | None = None
    labels: list[_GhName | str] | None = None
    author: _GhAuthor | str | None = None
    created_at: str | None = Field(default=None, alias="createdAt")

    def to_issue(self, position: str) -> Issue:
        labels = tuple(
            label if isinstance(label, str) else label.name for label in self.labels or []
        )
        author = self.author.login if isinstance(self.author, _GhAuthor) else self.author or ""
        return Issue(
            number=self.number,
            title=self.title.strip(),
            body=self.body or "",
            labels=labels,
            author=author,
            created_at=self.created_at or "",
            position=position,
        )


def read_issues(path: Path) -> list[Issue]:
    """The issues in the file at `path` (a JSON array or JSON Lines)."""
    text = read_input_file(path, "issues", IssuesFileError)
    return parse_issues(text, source=str(path))


def parse_issues(text: str, *, source: str = "issues") -> list[Issue]:
    """The issues of `text`: a JSON array when it starts with `[`, else JSON Lines."""
    start = text.lstrip(_WHITESPACE)[:1]
    if not start:
        raise IssuesFileError(f"{source} is empty; {_SHAPE}")
    records = _array_records(text, source) if start == "[" else _jsonl_records(text, source)
    issues = [_issue(value, index, line, source) for index, (value, line) in enumerate(records)]
    if not issues:
        raise IssuesFileError(f"{source} holds no issues; {_SHAPE}")
    _refuse_repeated_numbers(issues, source)
    return issues


def _issue(value: Any, index: int, line: int, source: str) -> Issue:
    position = f"index {index}, line {line}"
    if not isinstance(value, dict):
        kind = "array" if isinstance(value, list) else type(value).__name__
        raise IssuesFileError(f"{source}: the issue at {position} is a JSON {kind}; {_SHAPE}")
    try:
        record = _IssueRecord.model_validate(value)
    except ValidationError as exc:
        raise IssuesFileError(
            f"{source}: the issue at {position} is malformed: {_first_problem(exc)}; {_SHAPE}"
        ) from exc
    return record.to_issue(position)


def _first_problem(exc: ValidationError) -> str:
    error = exc.errors()[0]
    # pydantic puts the union member it tried into the path; a person wants the field alone.
    where = ".".join(str(part) for part in error["loc"] if part not in _UNION_MEMBERS)
    if error["type"] == "missing":
        return f"it has no {where!r}"
    shown = repr(error["input"])
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return f"{where!r}: {error['msg'][:1].lower()}{error['msg'][1:]} (got {shown})"


def _array_records(text: str, source: str) -> list[tuple[Any, int]]:
    """Each value of the top-level array with the line it starts on."""
    decoder = json.JSONDecoder()
    lines = _LineCounter(text)
    pos = _skip(text, text.index("[") + 1)
    records: list[tuple[Any, int]] = []
    if text.startswith("]", pos):
        return _end_of_array(text, pos + 1, source, records)
    while True:
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise IssuesFileError(
                f"{source}: the issue at index {len(records)} (line {lines.at(pos)}) is not "
                f"valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
            ) from exc
        records.append((value, lines.at(pos)))
        pos = _skip(text, end)
        if text.startswith("]", pos):
            return _end_of_array(text, pos + 1, source, records)
        if not text.startswith(",", pos):
            raise IssuesFileError(
                f"{source}: expected ',' or ']' after the issue at index {len(records) - 1} "
                f"(line {lines.at(pos)}); the file must be one JSON array of issues"
            )
        pos = _skip(text, pos + 1)


def _end_of_array(
    text: str, pos: int, source: str, records: list[tuple[Any, int]]
) -> list[tuple[Any, int]]:
    rest = _skip(text, pos)
    if rest < len(text):
        line = text.count("\n", 0, rest) + 1
        raise IssuesFileError(
            f"{source}: unexpected text after the array at line {line}; "
            "give one JSON array, or JSON Lines with one issue per line"
        )
    return records


def _jsonl_records(text: str, source: str) -> Iterator[tuple[Any, int]]:
    index = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise IssuesFileError(
                f"{source}: the issue at index {index}, line {number}, is not valid JSON "
                f"({exc.msg} at column {exc.colno}); write one JSON object per line"
            ) from exc
        yield value, number
        index += 1


def _refuse_repeated_numbers(issues: list[Issue], source: str) -> None:
    seen: dict[int, Issue] = {}
    for issue in issues:
        first = seen.setdefault(issue.number, issue)
        if first is not issue:
            raise IssuesFileError(
                f"{source}: issue number {issue.number} appears twice ({first.position}, and "
                f"{issue.position}); keep one of them"
            )


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WHITESPACE:
        pos += 1
    return pos


class _LineCounter:
    """Line numbers of increasing offsets, counted once over the text."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._pos = 0
        self._line = 1

    def at(self, pos: int) -> int:
        self._line += self._text.count("\n", self._pos, pos)
        self._pos = pos
        return self._line
