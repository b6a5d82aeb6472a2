"""The journal: the same behaviour from the SQLite store and its in-memory twin, plus the file."""

from __future__ import annotations

import io
import json
import re
import sqlite3
import sys
from itertools import count
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents._store import (
    MIGRATIONS,
    SCHEMA_VERSION,
    AgentRecord,
    DuplicateRecord,
    InvalidRecord,
    ItemRecord,
    JournalEvent,
    JournalUnreadable,
    LedgerEntry,
    RunRecord,
    SeqConflict,
    Store,
    StoreClosed,
    UnknownAgent,
    UnknownCall,
    UnknownItem,
    UnknownRun,
    export_jsonl,
    open_sqlite_store,
)
from corral.tools import InvalidInput

WAIT = 20
_clock = count(1)


def make_run(run_id: str = "run-1", status: str = "running") -> RunRecord:
    now = float(next(_clock))
    return RunRecord(
        run_id=run_id, kind="exec", status=status, created_at=now, updated_at=now, config={"n": 1}
    )


def make_agent(agent_id: str, run_id: str = "run-1", parent_id: str | None = None) -> AgentRecord:
    now = float(next(_clock))
    return AgentRecord(
        agent_id=agent_id,
        run_id=run_id,
        parent_id=parent_id,
        nickname=agent_id.title(),
        role="worker",
        status="running",
        created_at=now,
        updated_at=now,
        base_instructions="be useful",
        config={"model": "m"},
        depth=0 if parent_id is None else 1,
    )


def make_item(index: int, run_id: str = "run-1") -> ItemRecord:
    return ItemRecord(run_id=run_id, index=index, input={"file": f"f{index}.py"})


def make_call(call_id: str, agent_id: str = "a") -> LedgerEntry:
    return LedgerEntry(
        call_id=call_id, agent_id=agent_id, tool="shell", arguments='{"cmd":"ls"}', started_at=5.0
    )


async def seed(store: Store, *agent_ids: str) -> None:
    await store.create_run(make_run())
    for agent_id in agent_ids:
        await store.create_agent(make_agent(agent_id))


@pytest.mark.anyio
async def test_runs_are_created_read_listed_by_status_and_updated(store: Store) -> None:
    await store.create_run(make_run("old", status="completed"))
    await store.create_run(make_run("new"))
    await store.update_run("new", status="failed", summary={"cost": 0.25}, updated_at=99.5)

    new = await store.get_run("new")
    assert new is not None
    assert (new.status, new.summary, new.updated_at) == ("failed", {"cost": 0.25}, 99.5)
    assert [r.run_id for r in await store.list_runs()] == ["old", "new"]
    assert [r.run_id for r in await store.list_runs(status="completed")] == ["old"]
    assert await store.get_run("missing") is None
    with pytest.raises(DuplicateRecord, match="run 'new' already exists"):
        await store.create_run(make_run("new"))


@pytest.mark.anyio
async def test_update_refuses_identity_fields_and_wrongly_typed_values(store: Store) -> None:
    await seed(store, "a")
    with pytest.raises(
        InvalidRecord, match=r"cannot change RunRecord field\(s\) kind; allowed: config, "
    ):
        await store.update_run("run-1", kind="fanout")
    with pytest.raises(InvalidRecord, match="base_instructions"):
        await store.update_agent("a", base_instructions="something else")
    with pytest.raises(InvalidRecord, match="invalid AgentRecord update"):
        await store.update_agent("a", cost_usd="a lot")
    assert await store.get_agent("a") == (await store.list_agents("run-1"))[0]


@pytest.mark.anyio
async def test_agent_tree_is_created_listed_and_updated(store: Store) -> None:
    await seed(store, "root")
    await store.create_agent(make_agent("child", parent_id="root"))
    await store.update_agent(
        "child", status="completed", final_message="done", usage={"input_tokens": 7}, cost_usd=0.5
    )

    child = await store.get_agent("child")
    assert child is not None
    assert (child.parent_id, child.depth, child.status) == ("root", 1, "completed")
    assert (child.final_message, child.usage, child.cost_usd) == ("done", {"input_tokens": 7}, 0.5)
    assert [a.agent_id for a in await store.list_agents("run-1")] == ["root", "child"]
    assert await store.get_agent("nobody") is None


@pytest.mark.anyio
async def test_agent_needs_an_existing_run_parent_and_a_fresh_id(store: Store) -> None:
    await seed(store, "a")
    with pytest.raises(UnknownRun):
        await store.create_agent(make_agent("b", run_id="run-x"))
    with pytest.raises(UnknownAgent, match="'ghost'"):
        await store.create_agent(make_agent("b", parent_id="ghost"))
    with pytest.raises(DuplicateRecord, match="agent 'a' already exists"):
        await store.create_agent(make_agent("a"))
    assert [a.agent_id for a in await store.list_agents("run-1")] == ["a"]


@pytest.mark.anyio
async def test_unknown_ids_raise_caller_errors_that_say_where_to_look(store: Store) -> None:
    with pytest.raises(UnknownRun) as run_error:
        await store.update_run("run-x", status="failed")
    assert (
        str(run_error.value) == f"no run named 'run-x' in {store.journal}; `corral runs` lists them"
    )
    assert isinstance(run_error.value, InvalidInput)
    assert run_error.value.exit_code == 2
    with pytest.raises(UnknownAgent, match=r"no agent named 'agent-x' in .*`corral status RUN`"):
        await store.events("agent-x")
    for call in (
        store.list_agents("run-x"),
        store.items("run-x"),
        store.put_items("run-x", [make_item(0, "run-x")]),
    ):
        with pytest.raises(UnknownRun):
            await call
    for agent_call in (store.update_agent("agent-x", status="x"), store.ledger("agent-x")):
        with pytest.raises(UnknownAgent):
            await agent_call


@pytest.mark.anyio
async def test_concurrent_appends_from_twenty_agents_get_gap_free_seqs_in_order(
    store: Store,
) -> None:
    agent_ids = [f"agent-{n}" for n in range(20)]
    await seed(store, *agent_ids)
    returned: dict[str, list[JournalEvent]] = {agent_id: [] for agent_id in agent_ids}

    async def append(agent_id: str, n: int) -> None:
        event = await store.append_event(agent_id, "model_item", {"n": n}, at=float(n))
        returned[agent_id].append(event)

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as tg:
            for n in range(10):
                for agent_id in agent_ids:
                    tg.start_soon(append, agent_id, n)

    for agent_id in agent_ids:
        stored = await store.events(agent_id)
        assert [e.seq for e in stored] == list(range(1, 11))
        assert sorted(returned[agent_id], key=lambda e: e.seq) == stored


@pytest.mark.anyio
async def test_events_after_seq_are_the_later_ones_with_payloads_intact(store: Store) -> None:
    await seed(store, "a")
    payload: dict[str, Any] = {"f": 0.1, "i": 2**63 + 1, "neg": -1e-300, "s": "é\u2028", "l": [1]}
    for n in range(1, 6):
        await store.append_event("a", "tool_result", {**payload, "n": n}, at=n + 0.25)

    later = await store.events("a", after_seq=3)
    assert [(e.seq, e.payload["n"], e.at) for e in later] == [(4, 4, 4.25), (5, 5, 5.25)]
    assert later[0].payload == {**payload, "n": 4}
    assert await store.events("a", after_seq=5) == []


@pytest.mark.anyio
async def test_events_of_a_run_share_one_gap_free_sequence_across_its_agents(
    store: Store,
) -> None:
    await seed(store, "a", "b")
    await store.create_run(make_run("run-2"))
    await store.create_agent(make_agent("c", run_id="run-2"))
    for agent_id in ("a", "b", "a", "c", "b", "a"):
        await store.append_event(agent_id, "x", {"by": agent_id}, at=1.0)

    events = await store.run_events("run-1")
    assert [(e.run_seq, e.agent_id, e.seq) for e in events] == [
        (1, "a", 1),
        (2, "b", 1),
        (3, "a", 2),
        (4, "b", 2),
        (5, "a", 3),
    ]
    assert [e.run_seq for e in await store.run_events("run-2")] == [1]
    page = await store.run_events("run-1", after=1, limit=2)
    assert [e.run_seq for e in page] == [2, 3]
    assert await store.run_events("run-1", after=5) == []
    assert (await store.events("a"))[-1].run_seq == 5


@pytest.mark.anyio
async def test_a_numbered_batch_written_twice_is_journaled_once(store: Store) -> None:
    await seed(store, "a")
    await store.append_event("a", "user_input", {"n": 0}, at=1.0)
    batch = [("model_item", {"n": 1}, 2.0), ("model_completed", {"n": 2}, 3.0)]

    first = await store.append_events_at("a", 2, batch)
    again = await store.append_events_at("a", 2, batch)
    longer = await store.append_events_at("a", 2, [*batch, ("tool_result", {"n": 3}, 4.0)])

    assert [e.seq for e in first] == [2, 3] and again == []
    assert [(e.seq, e.kind) for e in longer] == [(4, "tool_result")]
    assert [e.payload["n"] for e in await store.events("a")] == [0, 1, 2, 3]


@pytest.mark.anyio
async def test_a_numbered_batch_that_leaves_a_gap_or_clashes_is_refused_whole(
    store: Store,
) -> None:
    await seed(store, "a")
    await store.append_event("a", "user_input", {}, at=1.0)
    with pytest.raises(SeqConflict, match="would leave a gap"):
        await store.append_events_at("a", 3, [("model_item", {}, 2.0)])
    with pytest.raises(SeqConflict, match="has a 'user_input' event at seq 1"):
        await store.append_events_at("a", 1, [("model_item", {}, 2.0)])
    with pytest.raises(InvalidRecord, match="not storable as JSON"):
        await store.append_events_at("a", 2, [("x", {}, 2.0), ("y", {"bad": float("nan")}, 3.0)])
    assert [e.kind for e in await store.events("a")] == ["user_input"]


@pytest.mark.anyio
async def test_payload_that_is_not_json_is_refused_without_using_a_seq(store: Store) -> None:
    await seed(store, "a")
    with pytest.raises(InvalidRecord, match="not storable as JSON"):
        await store.append_event("a", "x", {"bad": float("nan")}, at=1.0)
    with pytest.raises(InvalidRecord, match="not storable as JSON"):
        await store.append_event("a", "x", {"bad": object()}, at=1.0)
    event = await store.append_event("a", "x", {"ok": (1, 2)}, at=1.0)
    assert (event.seq, event.payload) == (1, {"ok": [1, 2]})


@pytest.mark.anyio
async def test_items_are_put_all_or_none_updated_and_listed_by_index(store: Store) -> None:
    await seed(store, "a")
    await store.put_items("run-1", [make_item(2), make_item(0), make_item(1)])
    await store.update_item(
        "run-1", 1, status="done", agent_id="a", result={"ok": True}, usage={"t": 3}, cost_usd=0.1
    )
    with pytest.raises(DuplicateRecord, match="item 0 already exists"):
        await store.put_items("run-1", [make_item(3), make_item(0)])
    with pytest.raises(UnknownItem, match="has no item 9"):
        await store.update_item("run-1", 9, status="done")
    with pytest.raises(UnknownAgent):
        await store.update_item("run-1", 0, agent_id="ghost")

    items = await store.items("run-1")
    assert [(i.index, i.status) for i in items] == [(0, "pending"), (1, "done"), (2, "pending")]
    assert (items[1].agent_id, items[1].result, items[1].usage) == ("a", {"ok": True}, {"t": 3})
    assert items[0].agent_id is None


@pytest.mark.anyio
async def test_ledger_holds_a_started_call_until_it_is_finished_once(store: Store) -> None:
    await seed(store, "a")
    await store.ledger_start(make_call("call-1"))
    [started] = await store.ledger("a")
    assert (started.state, started.output, started.success) == ("started", None, None)

    await store.ledger_finish("a", "call-1", output="file.txt", success=True, at=6.0)
    [finished] = await store.ledger("a")
    assert (finished.state, finished.output, finished.success) == ("finished", "file.txt", True)
    assert finished.finished_at == 6.0
    with pytest.raises(DuplicateRecord, match="already finished"):
        await store.ledger_finish("a", "call-1", output="again", success=False, at=7.0)
    with pytest.raises(DuplicateRecord, match="agent 'a' tool call 'call-1' already exists"):
        await store.ledger_start(make_call("call-1"))
    with pytest.raises(UnknownCall, match="ledger_start"):
        await store.ledger_finish("a", "call-x", output="", success=True, at=7.0)
    with pytest.raises(InvalidRecord, match="with an outcome"):
        await store.ledger_start(make_call("call-2").model_copy(update={"state": "finished"}))


@pytest.mark.anyio
async def test_two_agents_reusing_a_call_id_start_and_finish_their_calls_independently(
    store: Store,
) -> None:
    await seed(store, "a", "b")
    await store.ledger_start(make_call("call_1", agent_id="a"))
    await store.ledger_start(make_call("call_1", agent_id="b"))

    await store.ledger_finish("b", "call_1", output="from b", success=False, at=6.0)
    [a_entry] = await store.ledger("a")
    [b_entry] = await store.ledger("b")
    assert (a_entry.agent_id, a_entry.state, a_entry.output) == ("a", "started", None)
    assert (b_entry.agent_id, b_entry.state, b_entry.output) == ("b", "finished", "from b")

    await store.ledger_finish("a", "call_1", output="from a", success=True, at=7.0)
    [a_entry] = await store.ledger("a")
    assert (a_entry.state, a_entry.output, a_entry.success) == ("finished", "from a", True)
    assert (await store.ledger("b")) == [b_entry]
    with pytest.raises(DuplicateRecord, match="agent 'b' tool call 'call_1' already exists"):
        await store.ledger_start(make_call("call_1", agent_id="b"))
    with pytest.raises(DuplicateRecord, match="agent 'b' tool call 'call_1' already finished"):
        await store.ledger_finish("b", "call_1", output="again", success=True, at=8.0)


@pytest.mark.anyio
async def test_export_writes_run_agents_events_items_and_ledger_as_typed_lines(
    store: Store,
) -> None:
    await seed(store, "a", "b")
    await store.append_event("a", "user_input", {"text": "hi"}, at=1.0)
    await store.append_event("a", "model_item", {"text": "hello"}, at=2.0)
    await store.append_event("b", "user_input", {"text": "yo"}, at=3.0)
    await store.put_items("run-1", [make_item(0)])
    await store.ledger_start(make_call("call-1", agent_id="b"))
    out = io.StringIO()

    written = await export_jsonl(store, "run-1", out)

    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(lines) == written == 8
    kinds = [(line.pop("type"), line.get("seq")) for line in lines]
    agent_a = [("agent", None), ("event", 1), ("event", 2)]
    agent_b = [("agent", None), ("event", 1)]
    assert kinds == [("run", None), *agent_a, *agent_b, ("item", None), ("ledger", None)]
    assert RunRecord.model_validate(lines[0]) == await store.get_run("run-1")
    assert JournalEvent.model_validate(lines[3]).payload == {"text": "hello"}
    assert LedgerEntry.model_validate(lines[7]) == make_call("call-1", agent_id="b")
    with pytest.raises(UnknownRun):
        await export_jsonl(store, "run-x", io.StringIO())


@pytest.mark.anyio
async def test_closed_store_refuses_work(store: Store) -> None:
    await store.aclose()
    with pytest.raises(StoreClosed, match="closed"):
        await store.get_run("run-1")
    await store.aclose()


# The file itself: SQLite only.


@pytest.mark.anyio
async def test_reopened_journal_keeps_everything_including_unfinished_calls(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.sqlite"
    before = io.StringIO()
    async with open_sqlite_store(path) as store:
        await seed(store, "a")
        await store.append_event("a", "user_input", {"text": "hi", "at": 0.1}, at=1.0)
        await store.put_items("run-1", [make_item(0)])
        await store.ledger_start(make_call("call-1"))
        await export_jsonl(store, "run-1", before)

    async with open_sqlite_store(path) as reopened:
        after = io.StringIO()
        await export_jsonl(reopened, "run-1", after)
        [entry] = await reopened.ledger("a")
        event = await reopened.append_event("a", "tool_result", {}, at=2.0)

    assert after.getvalue() == before.getvalue()
    assert (entry.state, entry.output) == ("started", None)
    assert event.seq == 2


@pytest.mark.anyio
async def test_journal_file_is_in_wal_mode_with_a_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "new" / "folder" / "journal.sqlite"
    await open_and_close(path)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert conn.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
    conn.close()


@pytest.mark.anyio
async def test_two_stores_on_one_file_share_runs_and_one_seq_sequence(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    async with open_sqlite_store(path) as writer, open_sqlite_store(path) as reader:
        await seed(writer, "a")
        assert await reader.get_run("run-1") == await writer.get_run("run-1")

        async def append(store: Store, n: int) -> None:
            await store.append_event("a", "x", {"n": n}, at=1.0)

        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as tg:
                for n in range(20):
                    for store in (writer, reader):
                        tg.start_soon(append, store, n)

        assert [e.seq for e in await reader.events("a")] == list(range(1, 41))


async def open_and_close(path: Path) -> None:
    async with open_sqlite_store(path):
        pass


def write_file(path: Path, data: bytes) -> None:
    path.write_bytes(data)


@pytest.mark.anyio
async def test_garbage_file_is_reported_as_unreadable_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    write_file(path, b"these are my notes, not a database\n" * 200)
    with pytest.raises(
        JournalUnreadable, match=re.escape(f"{path} is not a readable corral journal")
    ):
        await open_and_close(path)


@pytest.mark.anyio
async def test_journal_from_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    await open_and_close(path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    conn.close()
    with pytest.raises(
        JournalUnreadable,
        match=rf"newer than this corral reads \({SCHEMA_VERSION}\); upgrade corral",
    ):
        await open_and_close(path)


@pytest.mark.anyio
async def test_a_journal_from_before_run_sequences_numbers_its_events_in_journal_order(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        conn.execute("INSERT INTO schema_version (version) VALUES (1)")
        for statement in MIGRATIONS[0].split(";"):
            conn.execute(statement)
        conn.execute("INSERT INTO runs VALUES ('r', 'exec', 'running', 1, 1, '{}', '{}')")
        for agent_id in ("a", "b"):
            conn.execute(
                "INSERT INTO agents VALUES (?, 'r', NULL, 'N', 'worker', 'running', 1, 1, "
                "'be useful', '{}', NULL, NULL, '{}', 0, 0)",
                (agent_id,),
            )
        for agent_id, seq, at in (("a", 1, 1.0), ("b", 1, 2.0), ("a", 2, 3.0)):
            conn.execute("INSERT INTO events VALUES (?, ?, 'x', '{}', ?)", (agent_id, seq, at))
    conn.close()

    async with open_sqlite_store(path) as store:
        migrated = [(e.run_seq, e.agent_id) for e in await store.run_events("r")]
        added = await store.append_event("b", "x", {}, at=4.0)
    assert migrated == [(1, "a"), (2, "b"), (3, "a")]
    assert (added.seq, added.run_seq) == (2, 4)


@pytest.mark.anyio
async def test_another_sqlite_database_is_not_taken_for_a_journal(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE users (name TEXT)")
    conn.close()
    with pytest.raises(JournalUnreadable, match="not a corral journal"):
        await open_and_close(path)
    with sqlite3.connect(path) as conn:
        tables = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    conn.close()
    assert tables == [("users",)]


KILLED_MID_TOOL = """
import asyncio, os, signal, sys
from pathlib import Path
from corral.agents._store import AgentRecord, LedgerEntry, RunRecord, open_sqlite_store

async def main() -> None:
    async with open_sqlite_store(Path(sys.argv[1])) as store:
        await store.create_run(RunRecord(
            run_id="run-1", kind="exec", status="running", created_at=1, updated_at=1, config={}))
        await store.create_agent(AgentRecord(
            agent_id="a", run_id="run-1", parent_id=None, nickname="A", role="worker",
            status="running", created_at=1, updated_at=1, base_instructions="", config={}))
        await store.append_event("a", "tool_calls", {"call_id": "call-1"}, at=2.0)
        await store.ledger_start(LedgerEntry(
            call_id="call-1", agent_id="a", tool="shell", arguments="{}", started_at=3.0))
        os.kill(os.getpid(), signal.SIGKILL)

asyncio.run(main())
"""


@pytest.mark.anyio
async def test_process_killed_while_a_tool_runs_leaves_the_call_started(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    with anyio.fail_after(WAIT):
        done = await anyio.run_process(
            [sys.executable, "-c", KILLED_MID_TOOL, str(path)], check=False
        )
    assert done.returncode == -9, done.stderr.decode()

    async with open_sqlite_store(path) as store:
        [entry] = await store.ledger("a")
        [event] = await store.events("a")
    assert (entry.call_id, entry.state, entry.finished_at) == ("call-1", "started", None)
    assert event.payload == {"call_id": "call-1"}


@pytest.mark.anyio
async def test_failing_writes_among_concurrent_ones_fail_alone(store: Store) -> None:
    await seed(store, "a")
    failures: list[Exception] = []

    async def append(agent_id: str, payload: dict[str, Any]) -> None:
        try:
            await store.append_event(agent_id, "x", payload, at=1.0)
        except (UnknownAgent, InvalidRecord) as exc:
            failures.append(exc)

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as tg:
            for n in range(10):
                tg.start_soon(append, "a", {"n": n})
                if n == 4:
                    tg.start_soon(append, "ghost", {"n": n})
                    tg.start_soon(append, "a", {"n": float("inf")})

    assert sorted(type(exc).__name__ for exc in failures) == ["InvalidRecord", "UnknownAgent"]
    stored = await store.events("a")
    assert [e.seq for e in stored] == list(range(1, 11))
    assert sorted(e.payload["n"] for e in stored) == list(range(10))
