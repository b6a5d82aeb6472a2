"""`corral exec` under `[budgets] max_cost_growth`: an agent whose turns grow is stopped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from corral.orchestrator.model_server import serve_model_server

from ._cli import corral_env, run_corral

pytestmark = pytest.mark.anyio


def runaway(request: dict[str, Any]) -> Any:
    """Lists the folder again and again; each turn's input is four times the last one's."""
    turn = sum(1 for item in request["input"] if item.get("type") == "function_call_output")
    listing = {"type": "function_call", "name": "list_dir", "arguments": json.dumps({"path": "."})}
    return {"output": [listing], "usage": {"input_tokens": 1000 * 4**turn, "output_tokens": 10}}


async def test_an_agent_whose_turn_cost_grows_past_the_factor_is_stopped_naming_the_breaker(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        '[prices."gpt-5.4-mini"]\ninput_per_mtok = 1.0\noutput_per_mtok = 10.0\n'
        "[budgets]\nmax_cost_growth = 3\n"
    )
    async with serve_model_server(runaway) as server:
        env = corral_env(home, server.base_url)
        result = await run_corral(
            ["exec", "--run-id", "run-runaway", "tidy up"], env=env, cwd=tmp_path
        )
        sent = len(server.requests)
    # Turns cost $0.0011, $0.0041, $0.0161 (mean $0.0071), then $0.0641: 9.0x the mean.
    assert result.code == 1
    assert "budget_exceeded: cost growth breaker: turn 4 cost $0.0641, 9.0x the mean" in (
        result.stderr
    )
    assert "budgets.max_cost_growth = 3" in result.stderr
    assert sent == 4
