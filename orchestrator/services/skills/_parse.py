"""Reads one SKILL.md and turns it into a `Skill`, or into a warning that says what is wrong.

The file must open with YAML frontmatter between `---` lines, as Codex and Claude Code require.
Frontmatter as people write it is accepted: `name` defaults to the skill's folder (as in
Codex), and a header that is not valid YAML only because a value holds `: ` or a tab is read
as plain `key: value` lines, with a note. Nothing here raises for a bad file: unreadable,
binary, oversized or invalid skills come back as a `SkillWarning` naming the file and the
fault, so one broken skill never stops a run.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ._model import (
    MAX_DESCRIPTION_CHARS,
    Scope,
    Skill,
    SkillFrontmatter,
    SkillWarning,
    cut_description,
)
from ._requirements import Requirements, RequirementsError, parse_requirements

SKILL_FILE = "SKILL.md"
MAX_SKILL_BYTES = 1024 * 1024
_FENCE = "---"
# YAML reports 0-based lines within the header, which starts on the file's second line.
_YAML_FIRST_LINE = 2
# A top-level `key: value` line of a header that YAML refused; the value is everything after.
_PLAIN_LINE = re.compile(r"(?P<key>[A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]+(?P<value>.*))?")
_BLOCK_INDICATORS = frozenset({">", "|", ">-", "|-", ">+", "|+"})


class _Fault(Exception):
    """Why a file is not a usable skill; turned into a warning by `parse_skill_file`."""


def parse_skill_file(path: Path, scope: Scope) -> Skill | SkillWarning:
    """The skill in `path`, or a warning "skipped PATH: FAULT" when it cannot be used."""
    notes: list[str] = []
    try:
        content = _read_text(path)
        header = _load_header(_frontmatter(content), path, notes.append)
        fields = _validate(_with_folder_name(header, path))
        requires = _requirements(fields, path)
    except _Fault as fault:
        return SkillWarning(path, f"skipped {path}: {fault}")
    description = cut_description(fields.description)
    if description != fields.description:
        notes.append(
            f"{path}: `description` is {len(fields.description)} characters long, past the "
            f"limit of {MAX_DESCRIPTION_CHARS}; listed cut to that length"
        )
    return Skill(
        name=fields.name,
        description=description,
        path=path,
        scope=scope,
        content=content,
        metadata=fields.extras,
        notes=tuple(notes),
        requires=requires,
    )


def _requirements(fields: SkillFrontmatter, path: Path) -> Requirements:
    try:
        return parse_requirements(fields.extras, path.parent)
    except RequirementsError as exc:
        raise _Fault(str(exc)) from exc


def _read_text(path: Path) -> str:
    try:
        with path.open("rb") as file:
            data = file.read(MAX_SKILL_BYTES + 1)
    except OSError as exc:
        raise _Fault(f"cannot read the file: {exc.strerror or exc}") from exc
    if len(data) > MAX_SKILL_BYTES:
        raise _Fault(f"the file is larger than {MAX_SKILL_BYTES:,} bytes")
    if b"\0" in data:
        raise _Fault("the file is binary, not Markdown text")
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise _Fault(f"the file is not UTF-8 text (byte {exc.start})") from exc


def _frontmatter(content: str) -> str:
    """The YAML between the opening and closing `---` lines."""
    parts = split_frontmatter(content)
    if parts is not None:
        return parts[0]
    if content.partition("\n")[0].rstrip() != _FENCE:
        raise _Fault("no frontmatter: the file must start with a `---` line, then YAML")
    raise _Fault("the frontmatter has no closing `---` line")


def split_frontmatter(content: str) -> tuple[str, str] | None:
    """The YAML between a SKILL.md's opening and closing `---` lines, and the text after
    them; None when the file does not open with a closed `---` header."""
    lines = content.splitlines()
    if not lines or lines[0].rstrip() != _FENCE:
        return None
    for index, line in enumerate(lines[1:], start=1):
        if line.rstrip() == _FENCE:
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :])
    return None


def _load_header(header: str, path: Path, note: Callable[[str], None]) -> Any:
    """The header's YAML; a header YAML refuses is read as plain `key: value` lines when every
    line is one (or continues one), since published skills write `description: Use when: ...`
    unquoted. Anything else stays the YAML error."""
    try:
        return _load_yaml(header)
    except _Fault as fault:
        plain = _plain_fields(header)
        if plain is None:
            raise
        note(f"{path}: {fault}; read as plain `key: value` lines (quote such values)")
        return plain


def _plain_fields(header: str) -> dict[str, str] | None:
    fields: dict[str, str] = {}
    last: str | None = None
    for line in header.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[:1] in (" ", "\t") and last is not None:
            fields[last] = f"{fields[last]} {line.strip()}".strip()
            continue
        match = _PLAIN_LINE.fullmatch(line.rstrip())
        if match is None:
            return None
        last = match["key"]
        value = (match["value"] or "").strip()
        fields[last] = "" if value in _BLOCK_INDICATORS else _unquoted(value)
    # `requires` is a table that decides whether the skill may be offered: never guessed.
    return fields if fields and "requires" not in fields else None


def _unquoted(value: str) -> str:
    quoted = len(value) >= 2 and value[0] == value[-1] and value[0] in "'\""
    return value[1:-1] if quoted else value


def _with_folder_name(header: Any, path: Path) -> Any:
    # Codex names a skill without `name` after its folder; Claude Code does the same.
    if isinstance(header, dict) and header.get("name") is None:
        return {**header, "name": path.parent.name}
    return header


def _load_yaml(header: str) -> Any:
    try:
        return yaml.safe_load(header)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + _YAML_FIRST_LINE}" if mark is not None else ""
        problem = exc.problem or exc.context or "cannot be parsed"
        raise _Fault(f"invalid YAML in the frontmatter{where}: {problem}") from exc
    except yaml.YAMLError as exc:
        raise _Fault(f"invalid YAML in the frontmatter: {exc}") from exc


def _validate(data: Any) -> SkillFrontmatter:
    if not isinstance(data, dict):
        raise _Fault("the frontmatter must be YAML keys and values, with `name` and `description`")
    try:
        return SkillFrontmatter.model_validate(data)
    except ValidationError as exc:
        raise _Fault("; ".join(_describe(error) for error in exc.errors())) from exc


def _describe(error: Any) -> str:
    field = ".".join(str(part) for part in error["loc"]) or "frontmatter"
    kind = error["type"]
    if kind == "missing":
        return f"`{field}` is missing from the frontmatter"
    if kind == "string_too_long":
        limit = error["ctx"]["max_length"]
        return f"`{field}` is {len(error['input'])} characters long; the limit is {limit}"
    if kind == "string_too_short" or (kind == "string_type" and error["input"] is None):
        return f"`{field}` is empty"
    return f"`{field}`: {error['msg']}"
