"""Skills reach the agent: a budgeted listing matched to its task, and `$name` bodies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from corral.orchestrator.model_server import serve_model_server

from ._cli import corral_env, run_corral

pytestmark = pytest.mark.anyio

SKILL = """---
name: release-notes
description: Write release notes for a version from the merged pull requests and commits.
---
# Release notes

1. List the merged pull requests since the last tag.
2. Group them into features, fixes and chores.
"""


def messages(request: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (item["role"], "".join(p.get("text", "") for p in item["content"]))
        for item in request["normalised"]["input"]
        if item.get("type") == "message"
    ]


async def test_an_agent_sees_matching_skills_and_the_body_of_a_mentioned_one(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    (home / "skills" / "release-notes").mkdir(parents=True)
    (home / "skills" / "release-notes" / "SKILL.md").write_text(SKILL)
    task = "Use $release-notes to draft the notes for version 2.1"
    async with serve_model_server(lambda r: "drafted") as server:
        result = await run_corral(
            ["exec", task], env=corral_env(home, server.base_url), cwd=tmp_path
        )
        assert result.code == 0, result.stderr
        sent = messages(server.requests[0])
    listing = [text for role, text in sent if text.startswith("<skills_instructions>")]
    assert len(listing) == 1 and "release-notes" in listing[0]
    assert [role for role, text in sent if text.startswith("<skills_instructions>")] == [
        "developer"
    ]
    task_at = sent.index(("user", task))
    body = sent[task_at + 1]
    assert body[0] == "user" and body[1].startswith("<skill>")
    assert "Group them into features, fixes and chores." in body[1]


async def test_with_no_skills_no_listing_is_sent(tmp_path: Path) -> None:
    async with serve_model_server(lambda r: "ok") as server:
        env = corral_env(tmp_path / "home", server.base_url)
        result = await run_corral(["exec", "hello"], env=env, cwd=tmp_path)
        assert result.code == 0, result.stderr
        sent = messages(server.requests[0])
    assert not any(text.startswith("<skills_instructions>") for _, text in sent)
