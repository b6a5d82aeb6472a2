"""A run's outcome names the journal it was written to: the home's SQLite file, or the shared
PostgreSQL journal's URL with its password shown as `***`, never the home's file it never used."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

import corral
from corral.agents import CorralConfig
from corral.orchestrator.fanout import run_fanout
from corral.orchestrator.runs import FanoutJob, RunSetup, WorkerTemplate

from ..e2e._cli import corral_env, run_corral
from ..packaging._sum_agent import add, policy

pytestmark = pytest.mark.anyio
PASSWORD = "s3cret-pw"


def with_password(url: str) -> str:
    """`url` with a password (the test server trusts loopback, so any password connects)."""
    parts = urlsplit(url)
    user, _, host = parts.netloc.rpartition("@")
    return urlunsplit(parts._replace(netloc=f"{user or 'corral'}:{PASSWORD}@{host}"))


def redacted(url: str) -> str:
    parts = urlsplit(url)
    user, _, host = parts.netloc.rpartition("@")
    return urlunsplit(parts._replace(netloc=f"{user.split(':')[0]}:***@{host}"))


async def test_an_exec_run_on_postgresql_names_that_journal_with_its_password_hidden(
    tmp_path: Path, postgres_url: str
) -> None:
    url = with_password(postgres_url)
    home = tmp_path / "home"
    async with corral.serve_model_server(policy) as server:
        env = {"CORRAL_HOME": str(home), "CORRAL_BASE_URL": server.base_url}
        env["CORRAL_JOURNAL_URL"] = url
        outcome = await corral.run_agent("add 2 and 3", tools=[add], cwd=tmp_path, env=env)
    assert outcome.finish.message == "the sum is 5"
    assert outcome.journal == redacted(url)
    assert PASSWORD not in outcome.journal and not (home / "journal.sqlite").exists()


async def test_an_exec_run_on_sqlite_names_the_homes_file(tmp_path: Path) -> None:
    async with corral.serve_model_server(policy) as server:
        env = {"CORRAL_HOME": str(tmp_path / "home"), "CORRAL_BASE_URL": server.base_url}
        outcome = await corral.run_agent("add 2 and 3", tools=[add], cwd=tmp_path, env=env)
    assert outcome.journal == str(tmp_path / "home" / "journal.sqlite")


def reports(request: dict[str, Any]) -> Any:
    if any(i.get("type") == "function_call_output" for i in request["input"]):
        return "reported"
    arguments = json.dumps({"n": 1})
    return [{"type": "function_call", "name": "report_result", "arguments": arguments}]


async def test_a_fanout_on_postgresql_names_that_journal_with_its_password_hidden(
    tmp_path: Path, postgres_url: str
) -> None:
    url = with_password(postgres_url)
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    async with corral.serve_model_server(reports) as server:
        config = CorralConfig(home=tmp_path / "home", base_url=server.base_url)
        config = config.model_copy(
            update={"journal": config.journal.model_copy(update={"url": url})}
        )
        job = FanoutJob(
            items=({"n": 1},),
            template="Item {n}: report it.",
            result_schema=schema,
            cwd=tmp_path,
            worker=WorkerTemplate(tools=()),
        )
        outcome = await run_fanout(config, job, RunSetup(env={}))
    assert outcome.done == 1
    assert outcome.journal == redacted(url) and PASSWORD not in outcome.journal


async def test_corral_fanout_prints_the_postgresql_journal_it_used_without_its_password(
    tmp_path: Path, postgres_url: str
) -> None:
    url = with_password(postgres_url)
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    (tmp_path / "items.jsonl").write_text('{"n": 1}\n')
    args = ["fanout", "--items", "items.jsonl", "--schema", "schema.json", "-q"]
    async with corral.serve_model_server(reports) as server:
        env = corral_env(tmp_path / "home", server.base_url, CORRAL_JOURNAL_URL=url)
        done = await run_corral([*args, "--template", "Item {n}"], env=env, cwd=tmp_path)
    assert done.code == 0, done.stderr
    assert f"; journal: {redacted(url)}\n" in done.stderr
    assert PASSWORD not in done.stderr + done.stdout
