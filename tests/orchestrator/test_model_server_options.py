"""Mistakes in how the server is started are refused up front, with messages that say what to do."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from corral.orchestrator.model_server import (
    FaultRates,
    ModelServerOptions,
    PolicyLoadError,
    PortInUse,
    ServerOptionsError,
    load_policy,
    parse_fault_plan,
    serve_model_server,
)
from corral.orchestrator.model_server.examples import echo
from corral.tools import InvalidInput


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            ModelServerOptions(),
            "a policy is required (--policy PATH.py:FUNC) unless --replay or --record",
        ),
        (
            ModelServerOptions(record_path=Path("c.jsonl")),
            "--record FILE and --upstream URL go together",
        ),
        (
            ModelServerOptions(replay_path=Path("missing.jsonl")),
            "cannot read --replay cassette missing.jsonl",
        ),
    ],
)
async def test_server_without_a_usable_answer_source_is_refused(
    options: ModelServerOptions, message: str
) -> None:
    with pytest.raises(ServerOptionsError) as caught:
        async with serve_model_server(None, options):
            pass
    assert message in str(caught.value)


@pytest.mark.anyio
async def test_fault_rates_adding_up_past_one_are_refused() -> None:
    options = ModelServerOptions(faults=FaultRates(fail=0.6, ratelimit=0.6))
    with pytest.raises(ServerOptionsError, match="the fault rates add up to more than 1"):
        async with serve_model_server(echo, options):
            pass


@pytest.mark.anyio
@pytest.mark.parametrize("seconds", [-1.0, float("nan"), float("inf"), 1e306, 86_400.5])
async def test_a_retry_after_that_is_not_a_wait_of_at_most_a_day_is_refused(seconds: float) -> None:
    options = ModelServerOptions(retry_after=seconds)
    with pytest.raises(ServerOptionsError, match="--retry-after must be from 0 to 86400 seconds"):
        async with serve_model_server(echo, options):
            pass


@pytest.mark.anyio
async def test_port_in_use_is_refused_in_process_too() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(PortInUse, match=f"port {port} on 127.0.0.1 is already in use"):
            async with serve_model_server(echo, ModelServerOptions(port=port)):
                pass


def test_fault_plan_entries_are_checked() -> None:
    assert parse_fault_plan("429, 500,disconnect,ok") == ("429", "500", "disconnect", "ok")
    with pytest.raises(ServerOptionsError, match="unknown fault plan entry '503'"):
        parse_fault_plan("429,503")


def test_policy_loads_from_a_module_name_or_a_file(tmp_path: Path) -> None:
    (tmp_path / "mine.py").write_text("def answer(request):\n    return 'ok'\n", encoding="utf-8")
    assert load_policy("corral.orchestrator.model_server.examples:echo") is echo
    assert load_policy(f"{tmp_path / 'mine.py'}:answer")({}) == "ok"


def test_policy_specs_that_cannot_load_say_why(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('half written')\n", encoding="utf-8")
    (tmp_path / "value.py").write_text("answer = 3\n", encoding="utf-8")
    cases = {
        "no-colon.py": "is not of the form PATH.py:FUNC",
        f"{broken}:answer": "failed to import: RuntimeError: half written",
        f"{tmp_path / 'value.py'}:answer": "value.py:answer is a int, not a function",
        "no_such_module_here:answer": "cannot import policy module 'no_such_module_here'",
    }
    for spec, message in cases.items():
        with pytest.raises(PolicyLoadError) as caught:
            load_policy(spec)
        assert message in str(caught.value)
        assert isinstance(caught.value, InvalidInput)


@pytest.mark.anyio
async def test_an_error_in_the_served_block_surfaces_as_itself() -> None:
    with pytest.raises(LookupError, match="from the test body"):
        async with serve_model_server(echo):
            raise LookupError("from the test body")
