"""What the live progress line says, driven through the runner's hooks with a fake clock."""

from __future__ import annotations

import io

from corral.agents import AgentStatus, Message, ModelPrice, ModelRequest, ModelResponse, Usage
from corral.orchestrator.cli._progress import LiveProgress


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def answered(tokens_in: int, tokens_out: int) -> ModelResponse:
    return ModelResponse(items=[], usage=Usage(input_tokens=tokens_in, output_tokens=tokens_out))


REQUEST = ModelRequest(model="m", instructions="", input=[Message(role="user", text="hi")])


def test_the_line_counts_workers_tokens_cost_and_estimates_what_is_left() -> None:
    clock, out = Clock(), io.StringIO()
    price = ModelPrice(input_per_mtok=1.0, output_per_mtok=2.0)
    progress = LiveProgress(
        "fanout", out=out, mode="live", price_of=lambda model: price, clock=clock, color=False
    )
    progress.started("run-1", total=4, left=4)
    for n in range(3):
        progress.agent_started(f"a{n}", None, f"worker-{n}")
    progress.model_call_ended("a0", REQUEST, answered(1_000_000, 500_000), None)
    clock.now += 10
    progress.turn_ended("a0", 1, AgentStatus.COMPLETED)
    progress.turn_ended("a1", 1, AgentStatus.FAILED)

    line = progress.status_text()
    assert line == (
        "1/4 done, 1 failed, 1 running · 1,500,000 tokens · $2.0000 · "
        "0:10 elapsed, about 0:10 left · worker-2"
    )
    assert out.getvalue().count("\r\x1b[2K") >= 2
    progress.close()
    assert out.getvalue().endswith("\n")


def test_an_unpriced_model_shows_a_dash_and_piped_output_is_one_line_per_worker() -> None:
    out = io.StringIO()
    progress = LiveProgress("triage", out=out, mode="lines", clock=Clock(), color=False)
    progress.started("run-2", total=2, left=2)
    progress.agent_started("a", None, "triager-1")
    progress.model_call_ended("a", REQUEST, answered(10, 5), None)
    progress.turn_ended("a", 1, AgentStatus.COMPLETED)
    assert out.getvalue().splitlines() == [
        "corral triage: run run-2 (2 items)",
        "corral triage: [1/2] triager-1 completed · 15 tokens · \u2014 · 0:00 elapsed, "
        "about 0:00 left",
    ]


def test_quiet_prints_only_the_run_id() -> None:
    out = io.StringIO()
    progress = LiveProgress("fanout", out=out, mode="quiet", clock=Clock(), color=False)
    progress.started("run-3", total=1, left=1)
    progress.agent_started("a", None, "worker-1")
    progress.turn_ended("a", 1, AgentStatus.COMPLETED)
    progress.close()
    assert out.getvalue() == "corral fanout: run run-3 (1 item)\n"
