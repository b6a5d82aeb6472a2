"""A completed fan-out extracts once, from its workers' reports and the files they touched;
a read-only, failed or memory-less fan-out extracts nothing. Real `corral fanout` processes
against the scripted model server."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from corral.orchestrator.memory import EXTRACTION
from corral.orchestrator.model_server import serve_model_server
from tests.e2e._cli import corral_env, run_corral

from .._scripted import call, outputs, texts
from ._scripted import FACT, purpose
from .test_memory_runs import CONFIG, repository

# Each step is a real `corral` process; a loaded machine needs more than the default minute.
pytestmark = [pytest.mark.anyio, pytest.mark.timeout(240)]

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
_ITEM = re.compile(r"Item (\d+):")


@dataclass
class WorkersReadTheMakefile:
    """Each worker reads `Makefile`, reports its item, and finishes; extraction answers FACT."""

    result: Any = None
    """What workers report; None: their item's number."""
    extractions: list[str] = field(default_factory=list)
    """Each extraction request's transcript."""

    def __call__(self, request: dict[str, Any]) -> Any:
        if purpose(request) == EXTRACTION:
            self.extractions.append("".join(text for _, text in texts(request)))
            return json.dumps({"memories": [{"text": FACT, "files": []}]})
        n = int(_ITEM.findall(json.dumps(request["input"]))[-1])
        done = outputs(request)
        if not done:
            return [call(f"read-{n}", "read_file", {"path": "Makefile"})]
        if len(done) == 1:
            reported = n if self.result is None else self.result
            return [call(f"report-{n}", "report_result", {"n": reported})]
        return f"item {n} checked: the Makefile runs pytest"


async def fanout(
    tmp_path: Path, policy: WorkersReadTheMakefile, *flags: str
) -> tuple[Path, dict[str, str]]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(CONFIG)
    repo = tmp_path / "repo"
    if not repo.exists():
        repository(repo)
    (tmp_path / "items.jsonl").write_text('{"n": 0}\n{"n": 1}\n')
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    args = [
        "fanout", *flags, "--items", str(tmp_path / "items.jsonl"),
        "--schema", str(tmp_path / "schema.json"), "--template", "Item {n}: check it.",
        "--out", str(tmp_path / "out.jsonl"), "--max-result-tries", "1",
    ]  # fmt: skip
    async with serve_model_server(policy) as server:
        env = corral_env(home, server.base_url)
        done = await run_corral(args, env=env, cwd=repo)
        assert done.code in (0, 1), done.stderr
    return repo, env


async def test_a_completed_fanout_extracts_once_from_what_its_workers_reported(
    tmp_path: Path,
) -> None:
    policy = WorkersReadTheMakefile()
    repo, env = await fanout(tmp_path, policy)
    (transcript,) = policy.extractions
    assert "Worker of item 0" in transcript and "Worker of item 1" in transcript
    assert "the Makefile runs pytest" in transcript and "TOOL CALL read_file" in transcript
    listed = await run_corral(["memory", "list", "--json"], env=env, cwd=repo)
    (memory,) = json.loads(listed.stdout)["memories"]
    assert memory["text"] == FACT and memory["files"] == ["Makefile"]


@pytest.mark.parametrize(
    ("flags", "result"),
    [(("--sandbox", "read-only"), None), ((), "not a number")],
    ids=["read-only", "failed"],
)
async def test_a_read_only_or_failed_fanout_extracts_nothing(
    tmp_path: Path, flags: tuple[str, ...], result: Any
) -> None:
    policy = WorkersReadTheMakefile(result=result)
    repo, env = await fanout(tmp_path, policy, *flags)
    assert policy.extractions == []
    listed = await run_corral(["memory", "list", "--json"], env=env, cwd=repo)
    assert json.loads(listed.stdout)["memories"] == []
