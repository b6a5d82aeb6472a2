"""AGENTS.md is written by whoever controls the project: its `@if` blocks must not let it look
outside the project, hang or crash the loader, or hide a malformed block without a warning."""

import os
from pathlib import Path

import anyio
import pytest

from corral.agents._agents_md import AgentsMd, load_agents_md

pytestmark = pytest.mark.hostile

SECRET = "KEPT-ONLY-IF-PROBED"


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


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file that exists outside the project: a probe would find it."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret").write_text("x")
    return folder / "secret"


def load(repo: Path, home: Path, text: str) -> AgentsMd:
    (repo / "AGENTS.md").write_text(text)
    return load_agents_md(repo, home=home)


def body(doc: AgentsMd) -> str:
    return "\n".join(part.text for part in doc.parts)


def _symlink_out(repo: Path, outside: Path) -> str:
    (repo / "out").symlink_to(outside.parent)
    return "out/secret"


def _absolute_symlink_file(repo: Path, outside: Path) -> str:
    (repo / "secret-link").symlink_to(outside)
    return "secret-link"


def _relative_symlink_climbing(repo: Path, outside: Path) -> str:
    (repo / "sub").mkdir()
    (repo / "sub" / "up").symlink_to("../../outside")
    return "sub/up/secret"


def _chained_symlinks(repo: Path, outside: Path) -> str:
    (repo / "a").symlink_to("b")
    (repo / "b").symlink_to(str(outside.parent))
    return "a/secret"


def _dotdot(repo: Path, outside: Path) -> str:
    return "../outside/secret"


def _dotdot_after_a_folder(repo: Path, outside: Path) -> str:
    (repo / "docs").mkdir()
    return "docs/../../outside/secret"


def _absolute(repo: Path, outside: Path) -> str:
    return str(outside)


def _tilde(repo: Path, outside: Path) -> str:
    return "~/../outside/secret"


ESCAPES = [
    _symlink_out,
    _absolute_symlink_file,
    _relative_symlink_climbing,
    _chained_symlinks,
    _dotdot,
    _dotdot_after_a_folder,
    _absolute,
    _tilde,
]


@pytest.mark.parametrize("escape", ESCAPES)
@pytest.mark.parametrize("op", ["=", "!="])
def test_exists_never_answers_for_a_path_outside_the_project(
    repo: Path, home: Path, outside: Path, escape: object, op: str
) -> None:
    assert callable(escape)
    target = escape(repo, outside)

    doc = load(repo, home, f"intro\n@if exists{op}{target}\n{SECRET}\n@endif")

    assert body(doc) == "intro"
    assert any(f"{repo / 'AGENTS.md'}:2:" in w and "outside" in w for w in doc.warnings)


def test_the_answer_for_an_escaping_path_is_the_same_whether_or_not_it_exists(
    repo: Path, home: Path, outside: Path
) -> None:
    text = f"@if exists=../outside/secret\n{SECRET}\n@endif\nend"
    present = body(load(repo, home, text))
    outside.unlink()

    assert body(load(repo, home, text)) == present == "end"


async def load_within(seconds: float, repo: Path, home: Path, text: str) -> AgentsMd:
    """`load` in a thread given up on after `seconds`: a loader that hangs fails the test."""
    with anyio.fail_after(seconds):
        return await anyio.to_thread.run_sync(
            lambda: load(repo, home, text), abandon_on_cancel=True
        )


@pytest.mark.anyio
async def test_a_symlink_loop_inside_the_project_is_false_not_a_hang(
    repo: Path, home: Path
) -> None:
    (repo / "loop-a").symlink_to("loop-b")
    (repo / "loop-b").symlink_to("loop-a")

    doc = await load_within(5, repo, home, f"@if exists=loop-a/x\n{SECRET}\n@endif\nend")

    assert body(doc) == "end"


MALFORMED = [
    ("@if language=python\nunclosed", 1, "without `@endif`"),
    ("fine\n@endif\nafter", 2, "without an open `@if`"),
    ("@if shell=rm -rf /\nx\n@endif", 1, "unknown condition `shell`"),
    ("@if language\nx\n@endif", 1, "is not a condition"),
    ("@if language=\nx\n@endif", 1, "has no value"),
    ("@if language=$(whoami)\nx\n@endif", 1, "takes a name"),
    ("@if exists=a\nx\n@endif trailing", 3, "text after `@endif`"),
]


@pytest.mark.parametrize(("text", "line", "why"), MALFORMED)
def test_a_malformed_block_is_sent_as_written_with_a_warning_naming_file_and_line(
    repo: Path, home: Path, text: str, line: int, why: str
) -> None:
    doc = load(repo, home, text)

    assert body(doc) == text.strip()
    assert any(w.startswith(f"{repo / 'AGENTS.md'}:{line}: ") and why in w for w in doc.warnings)


def test_a_malformed_block_leaves_the_well_formed_ones_decided(repo: Path, home: Path) -> None:
    text = "@if language=rust\nrust\n@endif\n@if colour=blue\nblue\n@endif"

    doc = load(repo, home, text)

    assert body(doc) == "@if colour=blue\nblue\n@endif"


def test_deep_nesting_is_refused_without_recursing_or_crashing(repo: Path, home: Path) -> None:
    depth = 1_000
    text = "@if environment!=x\n" * depth + "deep\n" + "@endif\n" * depth

    doc = load(repo, home, text)

    assert "deep" in body(doc)
    assert any("nest more than" in w for w in doc.warnings)


def test_many_blocks_are_decided_in_one_pass(repo: Path, home: Path) -> None:
    text = "@if exists=nothing-here\nx\n@endif\n" * 900 + "end"

    doc = load(repo, home, text)

    assert body(doc) == "end"


def test_warnings_never_repeat_one_fault_per_turn(repo: Path, home: Path) -> None:
    text = "@if colour=blue\nx\n@endif"

    first = load(repo, home, text).warnings
    second = load(repo, home, text).warnings

    assert first == second
    assert len(first) == 1


@pytest.mark.anyio
async def test_language_detection_reads_names_only_never_what_a_marker_points_at(
    repo: Path, home: Path, tmp_path: Path
) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (repo / "pyproject.toml").symlink_to(fifo)

    doc = await load_within(5, repo, home, "@if language=python\npy\n@endif")

    assert body(doc) == "py"


@pytest.mark.parametrize(
    "line",
    [
        "@if \x1b[2J\x1b[31mpwned",
        "@if language=\x1b]8;;http://evil\x07x",
        "@if exists=../\x1b[2Jx",
        "@if colour" + "=" * 5_000,
    ],
)
def test_a_warning_never_carries_control_characters_or_a_whole_line(
    repo: Path, home: Path, line: str
) -> None:
    doc = load(repo, home, f"{line}\nx\n@endif")

    assert doc.warnings
    assert all("\x1b" not in w and "\x07" not in w and len(w) < 400 for w in doc.warnings)
