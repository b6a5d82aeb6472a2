"""The README and the docs site say only what corral does: every command line in them parses with
corral's own parser, the README fits on a screen and claims no count it cannot back, and the
configuration reference is generated from the config model."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from corral.agents import CorralConfig
from corral.agents._config._reference import render_reference
from corral.orchestrator.cli._main import build_parser

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]
MAX_README_LINES = 200
# Not commands: a usage synopsis (`[--flag]`, `A | B`) or a line of printed output.
_SYNOPSIS = re.compile(r"\[-|\.\.\.|\(--|\[\.\.\.\]")


def code_lines(text: str) -> Iterator[str]:
    """The lines inside fenced code blocks, with backslash continuations joined."""
    fenced, pending = False, ""
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced, pending = not fenced, ""
            continue
        if not fenced:
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        if _open_quote(pending + line):
            pending += line + " "  # a quoted argument that runs on to the next line
            continue
        yield pending + line
        pending = ""


def _open_quote(line: str) -> bool:
    try:
        shlex.split(line)
    except ValueError:
        return True
    return False


def corral_commands(text: str) -> Iterator[list[str]]:
    """Each `corral ...` command in the code blocks as argv, cut at shell operators."""
    for line in code_lines(text):
        if _SYNOPSIS.search(line):
            continue
        lexer = shlex.shlex(line.strip().removeprefix("$ "), posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        command: list[str] = []
        for token in [*lexer, ";"]:
            if token and set(token) <= set("&|;<>()"):
                if command and _is_corral(command[0]) and not _is_output(command):
                    yield command
                command = []
            else:
                command.append(token)


def _is_corral(word: str) -> bool:
    return word == "corral" or word.endswith("/corral")


def _is_output(argv: list[str]) -> bool:
    """A line of printed output, such as "corral triage: run run-2b4a (40 items)"."""
    return len(argv) > 1 and argv[1].endswith(":")


def all_commands() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        for argv in corral_commands(page.read_text(encoding="utf-8")):
            found.append((str(page.relative_to(ROOT)), shlex.join(argv)))
    return found


COMMANDS = all_commands()


def test_the_docs_hold_command_lines_to_check() -> None:
    assert len(COMMANDS) > 20
    assert any(page == "README.md" for page, _ in COMMANDS)


@pytest.mark.parametrize(("page", "command"), COMMANDS, ids=[f"{p}: {c}" for p, c in COMMANDS])
def test_every_corral_command_line_in_the_docs_parses(page: str, command: str) -> None:
    argv = shlex.split(command)[1:]
    try:
        build_parser(argv).parse_args(argv)
    except SystemExit as exc:
        assert exc.code == 0, f"{page}: `{command}` does not parse"


def test_the_readme_fits_on_a_screen_or_two() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_no_page_states_a_test_count_that_would_go_stale(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert not re.search(r"\b\d[\d,]* (?:tests|attack cases|test cases)\b", text)


def test_the_configuration_reference_names_every_key_of_the_schema() -> None:
    reference = render_reference()
    for name in CorralConfig.model_fields:
        if name not in ("home", "key_endpoints"):
            assert f"`{name}`" in reference or f"[{name}" in reference, name
    assert "ignored" in reference and "`features`" in reference


def test_every_page_in_the_nav_exists() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))

    def pages(node: object) -> Iterator[str]:
        if isinstance(node, str):
            yield node
        elif isinstance(node, list):
            for child in node:
                yield from pages(child)
        elif isinstance(node, dict):
            for child in node.values():
                yield from pages(child)

    for page in pages(config["nav"]):
        assert (ROOT / "docs" / page).is_file(), page
