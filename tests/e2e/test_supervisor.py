"""`corral exec --role supervisor` end to end: the real CLI, its workers, the scripted server.

Checked from the requests the server logged: each worker's own instructions, its narrowed
permissions, its `<subagent_context>`, and that two siblings of one role send a common prefix.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from corral.agents import base_instructions
from corral.orchestrator.model_server import canonical_bytes, serve_model_server, shared_prefix_len
from corral.orchestrator.supervisor import COLLAB_TOOL_NAMES
from tests._scripted import Supervise, outputs, texts

from ._cli import corral_env, run_corral

pytestmark = pytest.mark.anyio

FOLLOW_UP = "did everyone finish?"
_CONTEXT = re.compile(r"<subagent_context>\nYou are (\S+) \(agent id (\S+)\)")
WORKERS: dict[str, dict[str, Any]] = {
    "spawn-a": {"message": "review a.py", "role": "reviewer", "sandbox": "read-only"},
    "spawn-b": {"message": "review b.py", "role": "reviewer", "sandbox": "read-only"},
    "spawn-c": {"message": "fix the bug in src", "write_set": ["src"]},
}


def context_index(request: dict[str, Any]) -> int | None:
    """The index in `input` of the `<subagent_context>` message, if any."""
    for index, item in enumerate(request["input"]):
        if item.get("type") == "message" and _CONTEXT.match(item["content"][0].get("text", "")):
            return index
    return None


supervise = Supervise(
    WORKERS, "all three workers are done", (FOLLOW_UP, "all three are still done")
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "AGENTS.md").write_text("house rules: small commits\n")
    return root


async def test_a_supervisor_run_gives_each_worker_its_role_its_narrowed_profile_and_its_context(
    workspace: Path, tmp_path: Path
) -> None:
    async with serve_model_server(supervise) as server:
        env = corral_env(tmp_path / "home", server.base_url)
        result = await run_corral(
            ["exec", "--role", "supervisor", "review and fix"], env=env, cwd=workspace
        )
        requests = [r["normalised"] for r in server.requests]
    assert result.code == 0, result.stderr
    assert result.stdout.strip() == "all three workers are done"

    root = [r for r in requests if context_index(r) is None]
    spawned = {
        call_id: json.loads(output)
        for call_id, output in outputs(root[-1]).items()
        if call_id in WORKERS
    }
    first: dict[str, dict[str, Any]] = {}
    for request in requests:
        index = context_index(request)
        if index is not None:
            found = _CONTEXT.match(request["input"][index]["content"][0]["text"])
            assert found is not None
            first.setdefault(found.group(1), request)
    a, b, c = (first[spawned[call_id]["nickname"]] for call_id in WORKERS)
    model = root[0]["model"]
    root_id = root[0]["prompt_cache_key"]

    # Instructions: each agent's role text; tools: collab tools for the supervisor only.
    assert root[0]["instructions"] == base_instructions(model, "supervisor", "pragmatic")
    assert a["instructions"] == base_instructions(model, "reviewer", "pragmatic")
    assert c["instructions"] == base_instructions(model, "general", "pragmatic")
    assert set(COLLAB_TOOL_NAMES) <= {t["name"] for t in root[0]["tools"]}
    assert not set(COLLAB_TOOL_NAMES) & {t["name"] for t in a["tools"]}

    # Permissions: rendered from each worker's narrowed profile.
    root_permissions = texts(root[0])[0][1]
    assert "## Sandbox: workspace-write" in root_permissions
    assert f"The writable root is `{workspace}`." in root_permissions
    reviewer_permissions = texts(a)[0]
    assert reviewer_permissions[0] == "developer"
    assert "## Sandbox: read-only" in reviewer_permissions[1]
    assert "writable root" not in reviewer_permissions[1]
    assert f"The writable root is `{workspace / 'src'}`." in texts(c)[0][1]

    # The subagent context: who, whose, what, where it may write, and who else is working.
    context = texts(c)[-2][1]
    nick_a, nick_b, nick_c = (spawned[k]["nickname"] for k in WORKERS)
    assert f"You are {nick_c} (agent id {spawned['spawn-c']['agent_id']})" in context
    assert f"Your parent is root ({root_id})." in context
    assert f"Your write set: {workspace / 'src'}." in context
    assert "Your task:\nfix the bug in src\n" in context
    assert f"- {nick_a} ({spawned['spawn-a']['agent_id']}): nothing (read-only)" in context
    assert f"- {nick_b} ({spawned['spawn-b']['agent_id']}): nothing (read-only)" in context
    assert "siblings" not in texts(a)[-2][1], "the first worker had no siblings yet"
    assert texts(c)[-1] == ("user", "fix the bug in src")

    # Two reviewers share their prefix: instructions, tools, and the context up to who they are.
    index = context_index(a)
    assert index is not None and index == context_index(b)
    common = canonical_bytes({**a, "input": a["input"][:index]})
    floor = len(canonical_bytes({"instructions": a["instructions"], "tools": a["tools"]}))
    shared = shared_prefix_len(canonical_bytes(a), canonical_bytes(b))
    assert canonical_bytes(b).startswith(common)
    assert shared >= len(common) > floor


async def test_a_supervisor_run_resumes_with_its_collab_tools_for_a_follow_up(
    workspace: Path, tmp_path: Path
) -> None:
    async with serve_model_server(supervise) as server:
        env = corral_env(tmp_path / "home", server.base_url)
        argv = ["exec", "--role", "supervisor", "--run-id", "run-sup", "review and fix"]
        first = await run_corral(argv, env=env, cwd=workspace)
        assert first.code == 0, first.stderr
        sent = len(server.requests)
        second = await run_corral(["resume", "run-sup", FOLLOW_UP], env=env, cwd=workspace)
        (follow_up,) = [r["normalised"] for r in server.requests[sent:]]
    assert second.code == 0, second.stderr
    assert second.stdout.strip() == "all three are still done"
    assert set(COLLAB_TOOL_NAMES) <= {t["name"] for t in follow_up["tools"]}
