"""`corral fanout` end to end: the real CLI, the real SDK, the scripted server over HTTP."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from corral.orchestrator.model_server import serve_model_server

from ._cli import corral_env, run_corral

pytestmark = pytest.mark.anyio

SCHEMA = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "words": {"type": "integer"}},
    "required": ["title", "words"],
}
_TASK = re.compile(r"Count the words of \"([^\"]*)\"")


def outputs(request: dict[str, Any]) -> list[str]:
    return [i["output"] for i in request["input"] if i.get("type") == "function_call_output"]


def messages(request: dict[str, Any]) -> str:
    parts = [p for i in request["input"] if i.get("type") == "message" for p in i["content"]]
    return "\n".join(part.get("text", "") for part in parts)


def word_counter(request: dict[str, Any]) -> Any:
    """Reports the word count of the title in its task, except for titles saying 'silent'."""
    if outputs(request):
        return "counted"
    (title,) = _TASK.findall(messages(request))
    if "silent" in title:
        return "I would rather not say."
    arguments = json.dumps({"title": title, "words": len(title.split())})
    return [{"type": "function_call", "name": "report_result", "arguments": arguments}]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "schema.json").write_text(json.dumps(SCHEMA))
    return root


def write_items(workspace: Path, *titles: str) -> Path:
    path = workspace / "items.jsonl"
    path.write_text("".join(json.dumps({"title": t}) + "\n" for t in titles))
    return path


FANOUT = ["fanout", "--items", "items.jsonl", "--schema", "schema.json"]
TEMPLATE = ["--template", 'Count the words of "{title}".']


async def test_fanout_writes_every_result_in_item_order(workspace: Path, tmp_path: Path) -> None:
    write_items(workspace, "one", "two words", "now three words", "and now four words")
    async with serve_model_server(word_counter) as server:
        env = corral_env(tmp_path / "home", server.base_url)
        args = [*FANOUT, *TEMPLATE, "--concurrency", "2", "--run-id", "run-words"]
        result = await run_corral(args, env=env, cwd=workspace)
        requests = len(server.requests)
    assert result.code == 0, result.stderr
    assert result.stderr.startswith("corral fanout: run run-words (4 items)\n")
    assert "corral fanout: 4 done, 0 failed of 4 items" in result.stderr
    lines = [json.loads(line) for line in (workspace / "results.jsonl").read_text().splitlines()]
    assert [(line["index"], line["status"]) for line in lines] == [(i, "done") for i in range(4)]
    assert [line["result"]["words"] for line in lines] == [1, 2, 3, 4]
    assert all(line["usage"]["input_tokens"] > 0 and line["error"] is None for line in lines)
    assert requests == 8, "a report_result call, then a final answer, per item"


async def test_a_worker_that_never_reports_fails_its_item_and_the_exit_code(
    workspace: Path, tmp_path: Path
) -> None:
    write_items(workspace, "loud title", "a silent title")
    async with serve_model_server(word_counter) as server:
        env = corral_env(tmp_path / "home", server.base_url)
        result = await run_corral([*FANOUT, *TEMPLATE, "--out", "-"], env=env, cwd=workspace)
    assert result.code == 1, result.stderr
    first, second = result.json_lines()
    assert (first["status"], first["result"]) == ("done", {"title": "loud title", "words": 2})
    assert second["status"] == "failed" and second["result"] is None
    assert second["error"] == "the worker finished without calling report_result"
    assert "1 done, 1 failed of 2 items" in result.stderr
    assert not (workspace / "results.jsonl").exists()


async def test_a_bad_items_line_is_reported_with_its_number_and_nothing_runs(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "items.jsonl").write_text('{"title": "fine"}\n\n{"title": oops}\n')
    home = tmp_path / "home"
    result = await run_corral(
        [*FANOUT, *TEMPLATE], env=corral_env(home, "http://127.0.0.1:9/v1"), cwd=workspace
    )
    assert result.code == 2
    assert "items.jsonl line 3: not valid JSON" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (home / "journal.sqlite").exists(), "no run was journaled"


async def test_a_template_field_missing_from_an_item_names_the_field_and_line(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "items.jsonl").write_text('{"title": "a"}\n{"name": "b"}\n')
    home = tmp_path / "home"
    result = await run_corral(
        [*FANOUT, *TEMPLATE], env=corral_env(home, "http://127.0.0.1:9/v1"), cwd=workspace
    )
    assert result.code == 2
    assert "{title}" in result.stderr and "items.jsonl line 2" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (home / "journal.sqlite").exists(), "no run was journaled"


async def test_an_invalid_schema_is_a_clear_error(workspace: Path, tmp_path: Path) -> None:
    write_items(workspace, "a")
    (workspace / "schema.json").write_text('{"type": "object", "required": "title"}')
    home = tmp_path / "home"
    result = await run_corral(
        [*FANOUT, *TEMPLATE], env=corral_env(home, "http://127.0.0.1:9/v1"), cwd=workspace
    )
    assert result.code == 2
    assert "schema.json is not a valid JSON Schema: at $.required" in result.stderr
    assert "Traceback" not in result.stderr
