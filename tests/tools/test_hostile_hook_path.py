"""Attacks on which program a hook runs: a hook named by a bare command (`guard`, `jq`,
`python3`) is looked up in PATH, and a PATH entry the agent can write to (a relative one such
as `node_modules/.bin`, or a folder inside the workspace) would let the model plant the
program that answers for the hook, or that runs outside the sandbox with `sandbox = "none"`."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.tools import (
    HookRunner,
    HooksConfig,
    ToolCall,
    ToolContext,
    ToolRegistry,
    ToolServices,
    run_tool_calls,
    shell_tool,
)

from .sandbox_support import PYTHON, Layout, make_layout

pytestmark = [
    pytest.mark.hostile,
    pytest.mark.anyio,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap"),
]

DEADLINE = 60.0
GUARD = "corral-test-guard"


@pytest.fixture
def layout() -> Iterator[Layout]:
    yield from make_layout()


def _script(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def _relative(layout: Layout) -> str:
    return "node_modules/.bin"


def _absolute_in_the_workspace(layout: Layout) -> str:
    return str(layout.workspace / "node_modules" / ".bin")


def _dot(layout: Layout) -> str:
    return "."


def _empty(layout: Layout) -> str:
    return ""


ENTRIES: list[Callable[[Layout], str]] = [_relative, _absolute_in_the_workspace, _dot, _empty]


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda f: f.__name__.strip("_"))
@pytest.mark.parametrize("sandbox", ["agent", "none"])
async def test_a_program_the_agent_planted_never_runs_as_the_users_hook(
    entry: Callable[[Layout], str],
    sandbox: str,
    layout: Layout,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The user's guard blocks every call; the planted one would let it through and leave a mark.
    tools = layout.outside / "tools"
    _script(tools / GUARD, "echo 'the real guard says no'; exit 2")
    planted = f"touch {layout.outside}/planted-ran; exit 0"
    for folder in (layout.workspace / "node_modules" / ".bin", layout.workspace):
        _script(folder / GUARD, planted)
    monkeypatch.setenv("PATH", os.pathsep.join([entry(layout), str(tools), "/usr/bin", "/bin"]))
    config = {"PreToolUse": [{"hooks": [{"command": GUARD, "sandbox": sandbox}]}]}
    await only_the_real_guard_answers(layout, config)


# A hook in the docs' style: Python reading the payload with the standard library.
PY_GUARD = (
    f"{PYTHON} -c 'import json, sys; d = json.load(sys.stdin); "  # the sandbox hides /tmp
    'print("the real guard says no"); sys.exit(2)\''
)


async def only_the_real_guard_answers(layout: Layout, config: dict[str, Any]) -> None:
    """A shell call under the PreToolUse hooks of `config` is refused by the user's own guard:
    the call does not run, and nothing the agent planted does either."""
    ctx = ToolContext(
        cwd=layout.workspace,
        profile=layout.profile(),
        services=ToolServices(hooks=HookRunner(HooksConfig.model_validate(config))),
    )
    call = ToolCall("c1", "shell", json.dumps({"command": "touch call-ran"}))
    with anyio.fail_after(DEADLINE):
        (output,) = await run_tool_calls(ToolRegistry([shell_tool()]), [call], ctx)
    assert "the real guard says no" in output.text
    assert not (layout.workspace / "call-ran").exists()
    assert not (layout.outside / "planted-ran").exists()


@pytest.mark.parametrize("shape", ["module", "package"])
@pytest.mark.parametrize("sandbox", ["agent", "none"])
async def test_a_module_the_agent_planted_is_never_imported_by_a_python_hook(
    shape: str, sandbox: str, layout: Layout
) -> None:
    planted = f"import pathlib\npathlib.Path({str(layout.outside)!r}, 'planted-ran').touch()\n"
    if shape == "package":
        (layout.workspace / "json").mkdir()
        (layout.workspace / "json" / "__init__.py").write_text(planted + "raise SystemExit(0)\n")
    else:
        (layout.workspace / "json.py").write_text(planted + "raise SystemExit(0)\n")
    config = {"PreToolUse": [{"hooks": [{"command": PY_GUARD, "sandbox": sandbox}]}]}
    await only_the_real_guard_answers(layout, config)
