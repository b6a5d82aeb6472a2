"""Attacks on the journal: text a model controls, a project that redirects the journal, a
request that redirects it, and a password that must never be printed.

A model's output reaches the journal verbatim (final messages, tool outputs, event payloads,
call ids). PostgreSQL's TEXT refuses NUL and text that is not UTF-8; a store that passed such
text through would let a model crash its own run. Every store must keep it as given.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.agents import load_config
from corral.agents._store import (
    AgentRecord,
    LedgerEntry,
    RunRecord,
    Store,
    Target,
    redact_url,
)
from corral.orchestrator.service._overrides import classify

pytestmark = [pytest.mark.hostile, pytest.mark.anyio]

HOSTILE_TEXT = {
    "nul": "before\x00after",
    "only-nul": "\x00",
    "marker-lookalike": '\x01j"not json',
    "marker-json": '\x01j"quoted"',
    "control": "\x01\x02\x7f",
    "sql": "'); DROP TABLE events; --",
    "lone-surrogate": "\ud800",
    "lone-low-surrogate": "x\udfffy",
}


@pytest.mark.parametrize("text", list(HOSTILE_TEXT.values()), ids=list(HOSTILE_TEXT))
async def test_text_a_model_controls_is_journaled_and_read_back_exactly(
    store: Store, text: str
) -> None:
    run_id, agent_id = f"run{text}", f"agent{text}"
    run = RunRecord(run_id=run_id, kind=text, status=text, created_at=1, updated_at=1, config={})
    await store.create_run(run)
    await store.create_agent(
        AgentRecord(
            agent_id=agent_id,
            run_id=run_id,
            parent_id=None,
            nickname=text,
            role=text,
            status="running",
            created_at=1.0,
            updated_at=1.0,
            base_instructions=text,
            config={text: text},
        )
    )
    await store.update_agent(agent_id, final_message=text, error=text)
    event = await store.append_event(agent_id, text, {text: [text]}, at=1.0)
    call = LedgerEntry(call_id=text, agent_id=agent_id, tool=text, arguments=text, started_at=1)
    await store.ledger_start(call)
    await store.ledger_finish(agent_id, text, output=text, success=True, at=2.0)
    assert await store.get_run(run_id) == run
    read_agent = await store.get_agent(agent_id)
    assert read_agent is not None and (read_agent.final_message, read_agent.error) == (text, text)
    assert read_agent.config == {text: text}
    assert await store.events(agent_id) == [event]
    assert event.kind == text and event.payload == {text: [text]}
    (entry,) = await store.ledger(agent_id)
    assert (entry.call_id, entry.tool, entry.arguments, entry.output) == (text, text, text, text)


def project_config(tmp_path: Path, text: str) -> tuple[Path, dict[str, str]]:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / ".corral").mkdir()
    (project / ".corral" / "config.toml").write_text(text)
    home = tmp_path / "home" / ".corral"
    return project, {"HOME": str(home.parent), "CORRAL_HOME": str(home)}


@pytest.mark.parametrize(
    "text",
    [
        '[journal]\nurl = "postgresql://attacker@evil.example/db"\n',
        'journal = { url = "postgres://attacker@evil.example/db" }\n',
        'journal.url = "postgresql://attacker@evil.example/db"\n',
    ],
    ids=["table", "inline-table", "dotted"],
)
def test_an_untrusted_project_cannot_point_the_journal_at_another_database(
    tmp_path: Path, text: str
) -> None:
    project, env = project_config(tmp_path, text)
    config = load_config(cwd=project, env=env).config
    assert config.journal.url is None


def test_a_service_request_may_never_point_the_journal_elsewhere() -> None:
    assert classify(("journal", "url")) == "never"


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://corral:s3cr3t-pw@db.internal:5432/corral",
        "postgresql://corral:s3cr3t-pw@db.internal/corral?sslmode=require",
        "postgres://corral:s3cr3t-pw@[::1]:5432/corral",
        "postgresql://:s3cr3t-pw@db.internal/corral",
    ],
)
def test_a_password_in_a_journal_url_is_redacted(url: str) -> None:
    shown = redact_url(url)
    assert "s3cr3t-pw" not in shown and "***" in shown


async def test_an_unreachable_journal_is_a_clear_error_without_its_password(
    tmp_path: Path,
) -> None:
    from corral.agents._store import JournalUnreadable, open_journal

    target: Target = "postgresql://corral:s3cr3t-pw@127.0.0.1:1/nowhere"
    with pytest.raises(JournalUnreadable) as caught:
        async with open_journal(target):
            pass
    assert "s3cr3t-pw" not in str(caught.value)
    assert "cannot reach the journal at postgresql://corral:***@127.0.0.1:1/nowhere" in str(
        caught.value
    )
