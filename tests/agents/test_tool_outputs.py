"""Tool outputs are journaled once, as the model sees them, with the full size and a hash."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import (
    AgentCore,
    AgentRunner,
    AgentStatus,
    CoreConfig,
    FunctionCall,
    FunctionCallOutput,
    Message,
    ModelRequest,
    Store,
    open_sqlite_store,
    replay_core,
)
from corral.agents._outputs import LEDGER_ELIDED, ledger_output, visible_result
from corral.agents.model import ScriptedModelClient
from corral.tools import PermissionProfile, Tool, ToolContext, ToolOutput, ToolRegistry
from tests._journal import seed_agent

from .test_runner import AGENT, NoArgs, first_input

pytestmark = pytest.mark.anyio
WAIT = 60.0
BIG = 50_000_000
MiB = 1024 * 1024


def test_the_visible_text_is_cut_to_the_token_limit_and_names_the_whole() -> None:
    text = "a" * 100_000
    result = visible_result("c", text, True, token_limit=100, max_bytes=4 * MiB)
    assert result.output.startswith("a" * 200) and result.output.endswith("a" * 200)
    assert "tokens truncated" in result.output
    assert len(result.output) < 500
    assert result.total_bytes == 100_000
    assert result.sha256 == hashlib.sha256(text.encode()).hexdigest()


def test_the_journal_cap_wins_over_a_larger_token_limit() -> None:
    result = visible_result("c", "b" * 200_000, True, token_limit=10**9, max_bytes=10_000)
    assert len(result.output.encode()) <= 10_000


def test_a_small_output_stays_whole_in_the_ledger_and_a_large_one_leaves_a_note() -> None:
    small = visible_result("c", "result recorded", True, token_limit=10_000, max_bytes=MiB)
    assert ledger_output(small) == "result recorded"
    large = visible_result("c", "x" * 60_000, True, token_limit=10_000, max_bytes=MiB)
    note = ledger_output(large)
    assert note.startswith(LEDGER_ELIDED) and "60000 bytes" in note and len(note) < 200


def test_an_output_that_imitates_the_note_cannot_pass_for_one() -> None:
    forged = visible_result("c", f"{LEDGER_ELIDED}1 bytes]", True, token_limit=100, max_bytes=MiB)
    assert ledger_output(forged) == f"{LEDGER_ELIDED}{forged.total_bytes} bytes, sha256 " + (
        f"{forged.sha256}]"
    )


def two_big_calls(request: ModelRequest) -> list[Any]:
    if any(isinstance(i, FunctionCallOutput) for i in request.input):
        return [Message(role="assistant", text="done")]
    return [FunctionCall(call_id=f"c{n}", name="flood", arguments="{}") for n in (1, 2)]


def flood_registry() -> ToolRegistry:
    async def flood(args: NoArgs, ctx: ToolContext) -> ToolOutput:
        return ToolOutput("z" * BIG)

    return ToolRegistry([Tool("flood", "prints 50 MB", NoArgs, flood, side_effects=False)])


def journal_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


async def run_two_floods(store: Store) -> tuple[AgentRunner, ModelRequest]:
    registry = flood_registry()
    config = CoreConfig(
        agent_id=AGENT, model="m", instructions="i", tools=tuple(registry.responses_tools())
    )
    seen: list[ModelRequest] = []

    def model(request: ModelRequest) -> list[Any]:
        seen.append(request)
        return two_big_calls(request)

    runner = AgentRunner(
        core=AgentCore(config),
        model=ScriptedModelClient(model),
        registry=registry,
        tool_context=ToolContext(cwd=Path("/w"), profile=PermissionProfile()),
        store=store,
    )
    with anyio.fail_after(WAIT):
        finish = await runner.drive(await runner.feed(first_input()))
    assert finish.status is AgentStatus.COMPLETED
    return runner, seen[-1]


async def test_two_50_mb_outputs_grow_the_journal_by_well_under_a_mib(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    async with open_sqlite_store(path) as store:
        await seed_agent(store, AGENT)
    before = journal_bytes(path)
    async with open_sqlite_store(path) as store:
        runner, last_request = await run_two_floods(store)
        events = [e for e in await store.events(AGENT) if e.kind == "tool_result"]
        ledger = await store.ledger(AGENT)
        replayed = await replay_core(store, runner.core.config)
    grown = journal_bytes(path) - before
    # Before this was built, the same run grew the journal by over 200 MB (each output twice).
    assert grown < MiB, f"the journal grew by {grown} bytes"
    sent = {i.call_id: i.output for i in last_request.input if isinstance(i, FunctionCallOutput)}
    digest = hashlib.sha256(b"z" * BIG).hexdigest()
    for event in events:
        payload = event.payload
        assert payload["output"] == sent[payload["call_id"]], "journaled as the model saw it"
        assert (payload["total_bytes"], payload["sha256"]) == (BIG, digest)
    assert all(e.output is not None and e.output.startswith(LEDGER_ELIDED) for e in ledger)
    assert replayed.history == runner.core.history
