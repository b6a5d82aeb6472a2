"""AGENTS.md files the way editors and repositories save them: a byte-order mark, Windows or
old-Mac line ends, a stray byte that is not UTF-8, front matter, code fences.

Each shape must load with the text the author meant (no BOM, LF line ends) and `@if` blocks
decided the same as in a plain file; bytes that are not UTF-8 are read as Codex reads them
(replaced, not fatal) with one warning naming the file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.agents._agents_md import load_agents_md

PLAIN = "# Rules\n\nRun the tests.\n\n@if language=rust\nUse cargo.\n@endif\n\nKeep diffs small.\n"
EXPECTED = "# Rules\n\nRun the tests.\n\n\nKeep diffs small."  # the block and its lines go


def _crlf(text: str) -> bytes:
    return text.replace("\n", "\r\n").encode()


SHAPES: dict[str, bytes] = {
    "plain": PLAIN.encode(),
    "crlf": _crlf(PLAIN),
    "bom": b"\xef\xbb\xbf" + PLAIN.encode(),
    "bom-crlf": b"\xef\xbb\xbf" + _crlf(PLAIN),
    "cr-only": PLAIN.replace("\n", "\r").encode(),
    "mixed-line-ends": PLAIN.replace("\n", "\r\n", 3).encode(),
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.mark.parametrize("data", SHAPES.values(), ids=SHAPES.keys())
def test_a_project_file_reads_the_same_whatever_its_bom_and_line_ends(
    data: bytes, repo: Path, home: Path
) -> None:
    (repo / "AGENTS.md").write_bytes(data)
    doc = load_agents_md(repo, home=home)
    assert [part.text for part in doc.parts] == [EXPECTED]
    assert doc.warnings == ()


@pytest.mark.parametrize("data", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize("name", ["AGENTS.md", "AGENTS.override.md"])
def test_the_global_file_reads_the_same_whatever_its_bom_and_line_ends(
    data: bytes, name: str, repo: Path, home: Path
) -> None:
    (home / name).write_bytes(data)
    doc = load_agents_md(repo, home=home)
    assert [part.text for part in doc.parts] == [EXPECTED]


@pytest.mark.parametrize(
    "data",
    [b"# Rules\n\nCopyright \xa9 2019 the authors.\n", b"\xff\xfe# Rules\n", b"caf\xe9\r\nrules"],
    ids=["latin1-sign", "utf16-bom-bytes", "latin1-crlf"],
)
def test_bytes_that_are_not_utf8_are_replaced_with_one_warning_naming_the_file(
    data: bytes, repo: Path, home: Path
) -> None:
    path = repo / "AGENTS.md"
    path.write_bytes(data)
    doc = load_agents_md(repo, home=home)
    (part,) = doc.parts
    assert "\ufffd" in part.text and "\r" not in part.text
    (warning,) = doc.warnings
    assert str(path) in warning and "not valid UTF-8" in warning and "\n" not in warning


def test_front_matter_and_code_fences_reach_the_model_as_written(repo: Path, home: Path) -> None:
    text = (
        "---\r\ntitle: Contributor guide\r\nowners: [core]\r\n---\r\n\r\n"
        "## Build\r\n\r\n```sh\r\nmake test   # all of them\r\n```\r\n"
    )
    (repo / "AGENTS.md").write_bytes(text.encode())
    doc = load_agents_md(repo, home=home)
    assert [part.text for part in doc.parts] == [text.replace("\r\n", "\n").strip()]


def test_a_crlf_file_cut_by_the_budget_keeps_lf_line_ends_and_says_what_was_cut(
    repo: Path, home: Path
) -> None:
    (repo / "AGENTS.md").write_bytes(_crlf("line of rules\n" * 50))
    (part,) = load_agents_md(repo, home=home, max_bytes=100).parts
    assert part.truncated and "\r" not in part.text
    assert part.text.startswith("line of rules\nline of rules\n")
    assert "truncated" in part.text.splitlines()[-1]
