"""`corral refactor` end to end: a real git repository, real bubblewrap, the scripted server.

The policy acts as a model would, keyed by the write set named in its task: it reads a file,
renames functions with `apply_patch`, runs the check with `shell` and reports. The `calc` worker
first tries to patch a file of the other worker; the `text` worker breaks the check and claims
it passed. What the user sees is checked: the summary, the branches and commits, their own tree.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from corral.orchestrator.model_server import serve_model_server
from tests._git import git, init_repo

from ._cli import corral_env, run_corral

pytestmark = pytest.mark.anyio

PYTHON = os.path.realpath(sys.executable)
CHECK = f"{shlex.quote(PYTHON)} -m unittest -q"
RUN = "run-rename"
INSTRUCTION = "Rename the camelCase functions to snake_case, callers included."

FILES = {
    "calc/__init__.py": "",
    "calc/ops.py": "def addNumbers(a, b):\n    return a + b\n\n\ndef mulNumbers(a, b):\n"
    "    return a * b\n",
    "calc/test_ops.py": "import unittest\n\nfrom calc.ops import addNumbers, mulNumbers\n\n\n"
    "class OpsTest(unittest.TestCase):\n    def test_add(self):\n"
    "        self.assertEqual(addNumbers(2, 3), 5)\n\n    def test_mul(self):\n"
    "        self.assertEqual(mulNumbers(2, 3), 6)\n",
    "text/__init__.py": "",
    "text/words.py": "def countWords(text):\n    return len(text.split())\n",
    "text/test_words.py": "import unittest\n\nfrom text.words import countWords\n\n\n"
    "class WordsTest(unittest.TestCase):\n    def test_count(self):\n"
    '        self.assertEqual(countWords("a b c"), 3)\n',
}
CALC_FILES = {"calc/__init__.py", "calc/ops.py", "calc/test_ops.py"}
TEXT_FILES = {"text/__init__.py", "text/words.py", "text/test_words.py"}

RENAME_CALC = """*** Begin Patch
*** Update File: calc/ops.py
@@
-def addNumbers(a, b):
+def add_numbers(a, b):
@@
-def mulNumbers(a, b):
+def mul_numbers(a, b):
*** Update File: calc/test_ops.py
@@
-from calc.ops import addNumbers, mulNumbers
+from calc.ops import add_numbers, mul_numbers
@@
-        self.assertEqual(addNumbers(2, 3), 5)
+        self.assertEqual(add_numbers(2, 3), 5)
@@
-        self.assertEqual(mulNumbers(2, 3), 6)
+        self.assertEqual(mul_numbers(2, 3), 6)
*** End Patch"""
RENAME_WORDS = """*** Begin Patch
*** Update File: text/words.py
@@
-def countWords(text):
+def count_words(text):
*** End Patch"""
_LISTED = re.compile(r"^- (\S+)$", re.MULTILINE)


def messages(request: dict[str, Any]) -> str:
    parts = [p for i in request["input"] if i.get("type") == "message" for p in i["content"]]
    return "\n".join(part.get("text", "") for part in parts)


def outputs(request: dict[str, Any]) -> list[str]:
    return [i["output"] for i in request["input"] if i.get("type") == "function_call_output"]


def call(name: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "function_call", "name": name, "arguments": json.dumps(arguments)}]


CHECK_CALL = ("shell", {"command": CHECK, "timeout_ms": 30_000})


def calc_worker(done: list[str]) -> Any:
    """Tries the other worker's file first, then renames in its own files and checks."""
    steps: list[tuple[str, dict[str, Any]]] = [
        ("apply_patch", {"input": RENAME_WORDS}),
        ("read_file", {"path": "calc/ops.py"}),
        ("apply_patch", {"input": RENAME_CALC}),
        CHECK_CALL,
    ]
    if len(done) < len(steps):
        return call(*steps[len(done)])
    if len(done) == len(steps):
        passed = "Exit code: 0" in done[-1]
        report = {"summary": "renamed addNumbers, mulNumbers", "check_passed": passed}
        return call("report_result", report)
    return "renamed and checked"


def text_worker(done: list[str], task: str) -> Any:
    """Renames the definition but not its caller (the test), and claims the check passed."""
    steps: list[tuple[str, dict[str, Any]]] = [
        ("read_file", {"path": "text/words.py"}),
        ("apply_patch", {"input": RENAME_WORDS}),
        CHECK_CALL,
    ]
    if "This is attempt 2 of 2" in task:
        steps = []  # gives up at once, still claiming success
    if len(done) < len(steps):
        return call(*steps[len(done)])
    if len(done) == len(steps):
        return call("report_result", {"summary": "renamed countWords", "check_passed": True})
    return "renamed"


def refactorer(request: dict[str, Any]) -> Any:
    task = messages(request)
    owned = set(_LISTED.findall(task))
    if "calc/ops.py" in owned:
        return calc_worker(outputs(request))
    if "text/words.py" in owned:
        return text_worker(outputs(request), task)
    return "I own no file I know"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = init_repo(tmp_path / "repo", FILES)
    (root / "notes.txt").write_text("untracked notes stay where they are\n")
    return root


def user_view(repo: Path) -> tuple[str, str, str, dict[str, str]]:
    """HEAD, the checked-out branch, `git status`, and the content of every file."""
    paths = [p for p in repo.rglob("*") if p.is_file() and ".git" not in p.relative_to(repo).parts]
    files = {str(p.relative_to(repo)): p.read_text() for p in paths}
    status = git(repo, "status", "--porcelain", "--untracked-files=all")
    return git(repo, "rev-parse", "HEAD"), git(repo, "symbolic-ref", "HEAD"), status, files


def commit_files(repo: Path, commit: str) -> set[str]:
    return set(git(repo, "show", "--name-only", "--format=", commit).splitlines())


async def test_passing_workers_are_merged_and_a_failing_check_keeps_a_worker_out(
    repo: Path, tmp_path: Path
) -> None:
    before = user_view(repo)
    temp = tmp_path / "tmp"
    temp.mkdir()
    args = ["refactor", "--repo", str(repo), "--instruction", INSTRUCTION, "--check", CHECK]
    args += ["--concurrency", "2", "--max-attempts", "2", "--run-id", RUN]
    async with serve_model_server(refactorer) as server:
        env = corral_env(tmp_path / "home", server.base_url, TMPDIR=str(temp))
        result = await run_corral(args, env=env, cwd=tmp_path)
        requests = [record["normalised"] for record in server.requests]
    assert result.code == 1, result.stderr
    assert "Traceback" not in result.stderr
    calc, text = f"corral/refactor/{RUN}/1", f"corral/refactor/{RUN}/2"
    out = result.stdout
    assert "worker 1: merged\n  files: calc/__init__.py, calc/ops.py, calc/test_ops.py" in out
    assert (
        "worker 2: check failed\n  files: text/__init__.py, text/test_words.py, text/words.py"
        in out
    )
    assert "check: failed (exit 1); the worker said it passed" in out
    assert f"result: branch corral/refactor/{RUN}/result has the changes of worker(s) 1" in out
    assert "check on the merged result: passed (exit 0)" in out

    # Disjoint write sets, and each worker's commit touches its own files only.
    base = before[0]
    calc_commit, text_commit = git(repo, "rev-parse", calc), git(repo, "rev-parse", text)
    assert commit_files(repo, calc_commit) == {"calc/ops.py", "calc/test_ops.py"}
    assert commit_files(repo, text_commit) == {"text/words.py"}
    assert git(repo, "rev-parse", f"{calc}~1") == git(repo, "rev-parse", f"{text}~1") == base

    # The attempt on the other worker's file was refused and left it as it was.
    refusals = [
        o for r in requests for o in outputs(r) if "writing text/words.py is not allowed" in o
    ]
    assert refusals, "the calc worker's first patch was refused"
    result_branch = f"corral/refactor/{RUN}/result"
    assert git(repo, "show", f"{result_branch}:text/words.py") == FILES["text/words.py"].strip()

    # The result holds the passing worker's commit, and not the failing one's.
    merged = git(repo, "log", "--format=%H", f"{base}..{result_branch}").splitlines()
    assert calc_commit in merged and text_commit not in merged
    assert "def add_numbers" in git(repo, "show", f"{result_branch}:calc/ops.py")

    # The second attempt was told why the check failed.
    retries = [messages(r) for r in requests if "This is attempt 2 of 2" in messages(r)]
    assert retries and "countWords" in retries[0] and "Error" in retries[0]

    # The user's tree, branch and HEAD are as they were; no worktree is left.
    assert user_view(repo) == before
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert list(temp.iterdir()) == []


async def test_uncommitted_changes_are_refused_and_nothing_is_made(
    repo: Path, tmp_path: Path
) -> None:
    (repo / "calc" / "ops.py").write_text("# half-done edit\n")
    before = user_view(repo)
    home = tmp_path / "home"
    args = ["refactor", "--repo", str(repo), "--instruction", INSTRUCTION, "--check", CHECK]
    result = await run_corral(args, env=corral_env(home, "http://127.0.0.1:9/v1"), cwd=tmp_path)
    assert result.code == 2
    assert "uncommitted changes (M calc/ops.py)" in result.stderr
    assert "would be missing from the result; commit them or `git stash` them" in result.stderr
    assert "Traceback" not in result.stderr
    assert user_view(repo) == before
    assert git(repo, "branch", "--list", "corral/*") == ""
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert not (home / "journal.sqlite").exists(), "no run was journaled"
