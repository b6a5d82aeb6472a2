"""Codex's own apply_patch conformance scenarios, every one, run through the `apply_patch` tool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from corral.tools import PermissionProfile, ToolContext
from corral.tools._apply_patch_tool import apply_patch_tool

from .._shared import needs_shared, shared_folder
from ._tree_snapshot import copy_tree, tree_contents

# `shared/` beside the clone holds the scenarios copied from Codex unchanged.
SCENARIOS = shared_folder("apply-patch-scenarios")
CODEX_SCENARIO_COUNT = 23
pytestmark = needs_shared("apply-patch-scenarios")

# The one deliberate difference from Codex: corral's apply_patch is all-or-nothing. In 015 the
# patch adds created.txt and then fails on a missing file; Codex keeps created.txt, corral
# writes nothing, so the tree must stay exactly as its input (here: empty).
ALL_OR_NOTHING = {"015_failure_after_partial_success_leaves_changes"}


def _scenario_names() -> list[str]:
    if not SCENARIOS.is_dir():
        return ["(no scenarios)"]  # one case, skipped with the folder it needs
    return sorted(p.name for p in SCENARIOS.iterdir() if p.is_dir())


def test_every_codex_scenario_is_present() -> None:
    assert len(_scenario_names()) == CODEX_SCENARIO_COUNT


@pytest.mark.anyio
@pytest.mark.parametrize("name", _scenario_names())
async def test_scenario_leaves_the_tree_that_codex_expects(name: str, tmp_path: Path) -> None:
    case = SCENARIOS / name
    tree = tmp_path / "tree"
    copy_tree(case / "input", tree)
    ctx = ToolContext(cwd=tree, profile=PermissionProfile.for_workspace("workspace-write", tree))
    patch = (case / "patch.txt").read_text(encoding="utf-8")

    output = await apply_patch_tool().invoke(json.dumps({"input": patch}), ctx)

    # Like Codex's runner, the exit status is not compared: the tree is the verdict.
    expected = case / ("input" if name in ALL_OR_NOTHING else "expected")
    assert tree_contents(tree) == tree_contents(expected), output.text
    if name in ALL_OR_NOTHING:
        assert not output.success
        assert "missing.txt" in output.text
