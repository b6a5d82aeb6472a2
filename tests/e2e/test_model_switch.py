"""`corral resume --model`: the agent carries on with the new model, its `instructions` stay as
they were, and a `<model_switch>` developer fragment gives it the new family's instructions,
once: a later resume keeps the new model and says nothing more."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from corral.orchestrator.model_server import serve_model_server

from ._cli import corral_env, run_corral

pytestmark = pytest.mark.anyio


def developer_texts(record: dict[str, Any]) -> list[str]:
    return [
        "".join(part.get("text", "") for part in item["content"])
        for item in record["normalised"]["input"]
        if item.get("type") == "message" and item["role"] == "developer"
    ]


async def test_resume_with_another_model_tells_the_model_once_and_keeps_the_new_model(
    tmp_path: Path,
) -> None:
    async with serve_model_server(lambda request: "ok") as server:
        env = corral_env(tmp_path / "home", server.base_url)
        first = ["exec", "-c", 'model="gpt-5.4-mini"', "--run-id", "run-sw", "start"]
        assert (await run_corral(first, env=env, cwd=tmp_path)).code == 0
        switched = ["resume", "run-sw", "carry on", "--model", "gpt-5.5"]
        result = await run_corral(switched, env=env, cwd=tmp_path)
        assert result.code == 0, result.stderr
        again = await run_corral(["resume", "run-sw", "once more"], env=env, cwd=tmp_path)
        assert again.code == 0, again.stderr
        started, after_switch, later = server.requests
    assert [r["model"] for r in (started, after_switch, later)] == [
        "gpt-5.4-mini",
        "gpt-5.5",
        "gpt-5.5",
    ]
    instructions = started["body"]["instructions"]
    assert after_switch["body"]["instructions"] == later["body"]["instructions"] == instructions
    switches = [t for t in developer_texts(later) if t.startswith("<model_switch>")]
    (switch,) = switches
    assert "previously using a different model (gpt-5.4-mini)" in switch
    assert switch.rstrip().endswith("</model_switch>")
    assert switches == [t for t in developer_texts(after_switch) if t.startswith("<model_switch>")]


async def test_an_empty_model_name_is_refused_with_what_to_do(tmp_path: Path) -> None:
    async with serve_model_server(lambda request: "ok") as server:
        env = corral_env(tmp_path / "home", server.base_url)
        await run_corral(["exec", "--run-id", "run-e", "start"], env=env, cwd=tmp_path)
        result = await run_corral(["resume", "run-e", "x", "--model", " "], env=env, cwd=tmp_path)
    assert result.code == 2
    assert "the model name is empty" in result.stderr
