"""Choosing the executor: local by default and unchanged, Temporal when asked, refused where it
cannot work, and the local path untouched by a missing or unreachable Temporal.

The runs go through the real `corral` command against the scripted model server; the one run
on Temporal uses a dev server on loopback and one real `corral worker` process.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import WorkflowExecutionStatus

from corral.agents import load_config
from corral.orchestrator.cli import main
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.runs import (
    ExecutorSettingsError,
    LocalExecutor,
    executor_from_settings,
    resolve_executor_settings,
)
from corral.orchestrator.temporal import TemporalSettings, connect
from tests._trust import trust_project
from tests.e2e._cli import Result, corral_env, run_corral
from tests.observability._otlp_receiver import otlp_receiver
from tests.temporal import conftest as temporal_fixtures
from tests.temporal.test_fanout_on_temporal import corral_worker

temporal_address = temporal_fixtures.temporal_address
free_port = temporal_fixtures.free_port

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
TEMPLATE = "Item {n}: report n."
FAIL_FAST = 10.0
"""A run at an address where nothing listens must end well within this (it takes ~2 s)."""


def reporter(request: dict[str, Any]) -> Any:
    """Reports the item's number, then says it is done."""
    if any(i.get("type") == "function_call_output" for i in request["input"]):
        return "reported"
    text = json.dumps(request["input"])
    number = int(text.rsplit("Item ", 1)[1].split(":", 1)[0])
    arguments = json.dumps({"n": number})
    return [{"type": "function_call", "name": "report_result", "arguments": arguments}]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "schema.json").write_text(json.dumps(SCHEMA))
    (root / "items.jsonl").write_text("".join(json.dumps({"n": n}) + "\n" for n in range(3)))
    return root


def fanout_args(*extra: str) -> list[str]:
    items = ["--items", "items.jsonl", "--schema", "schema.json", "--template", TEMPLATE]
    return ["fanout", *items, *extra]


def results(workspace: Path) -> list[dict[str, Any]]:
    lines = (workspace / "results.jsonl").read_text().splitlines()
    return [json.loads(line)["result"] for line in lines]


def assert_one_clean_error(result: Result, *needles: str) -> None:
    assert result.code != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.mark.anyio
async def test_an_unreachable_temporal_fails_at_once_naming_no_run_and_a_local_run_after_works(
    workspace: Path, tmp_path: Path
) -> None:
    address = f"127.0.0.1:{free_port()}"
    far = ("--executor", "temporal", "--temporal-address", address)
    async with serve_model_server(reporter) as model:
        env = corral_env(tmp_path / "home", model.base_url)
        failed = [
            await run_corral(args, env=env, cwd=workspace, deadline=FAIL_FAST)
            for args in (fanout_args(*far), ["exec", *far, "say hi"])
        ]
        local = await run_corral(fanout_args("--run-id", "run-local"), env=env, cwd=workspace)
    for result in failed:
        assert_one_clean_error(result, f"cannot reach the Temporal server at {address}")
        assert "--executor local" in result.stderr
        assert ": run " not in result.stderr, "no id of a run that never started"
    assert local.code == 0, local.stderr
    assert local.stderr.startswith("corral fanout: run run-local (3 items)\n")
    assert results(workspace) == [{"n": n} for n in range(3)]


def test_refactor_on_temporal_is_refused_because_its_worktrees_are_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path / "home"))
    argv = ["refactor", "--repo", str(tmp_path), "--instruction", "rename x to y"]
    code = main([*argv, "--executor", "temporal"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("corral refactor: error: refactor cannot run with --executor temporal")
    assert "worktrees" in err and "use --executor local" in err


def test_config_executor_is_used_and_the_flag_overrides_it(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".corral").mkdir(parents=True)
    (project / ".corral" / "config.toml").write_text(
        'executor = "temporal"\n[temporal]\naddress = "temporal.internal:7233"\n'
        'namespace = "corral-prod"\n'
    )
    trust_project(tmp_path / "home", project)
    env = {"CORRAL_HOME": str(tmp_path / "home")}
    config = load_config(cwd=project, env=env).config
    chosen = resolve_executor_settings(config)
    assert (chosen.kind, chosen.address, chosen.namespace) == (
        "temporal",
        "temporal.internal:7233",
        "corral-prod",
    )
    flagged = resolve_executor_settings(config, address="10.0.0.5:7000", namespace="ns")
    assert (flagged.address, flagged.namespace) == ("10.0.0.5:7000", "ns")
    assert resolve_executor_settings(config, kind="local").kind == "local"
    assert isinstance(
        executor_from_settings(resolve_executor_settings(config, kind="local")), LocalExecutor
    )


def test_environment_variables_choose_the_executor_and_its_server(tmp_path: Path) -> None:
    env = {
        "CORRAL_HOME": str(tmp_path / "home"),
        "CORRAL_EXECUTOR": "temporal",
        "CORRAL_TEMPORAL_ADDRESS": "[::1]:7233",
    }
    chosen = resolve_executor_settings(load_config(cwd=tmp_path, env=env).config)
    assert (chosen.kind, chosen.address) == ("temporal", "[::1]:7233")


@pytest.mark.parametrize("address", ["localhost", "127.0.0.1:", ":7233", "host:99999", "a b:1"])
def test_an_address_that_is_not_host_and_port_is_refused_naming_it(
    address: str, tmp_path: Path
) -> None:
    config = load_config(cwd=tmp_path, env={"CORRAL_HOME": str(tmp_path)}).config
    with pytest.raises(ExecutorSettingsError) as caught:
        resolve_executor_settings(config, kind="temporal", address=address)
    assert f"--temporal-address {address!r} is not HOST:PORT" in str(caught.value)


def test_config_executor_reaches_the_command_and_local_flag_overrides_it(
    workspace: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    address = f"127.0.0.1:{free_port()}"
    (workspace / ".corral").mkdir()
    (workspace / ".corral" / "config.toml").write_text(
        f'executor = "temporal"\n[temporal]\naddress = "{address}"\n'
    )
    trust_project(tmp_path / "home", workspace)
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CORRAL_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")
    monkeypatch.chdir(workspace)
    assert main(fanout_args()) == 1
    assert f"cannot reach the Temporal server at {address}" in capsys.readouterr().err
    # Locally, the same command gets as far as the model, which is not there either.
    local = fanout_args(
        "--executor", "local", "--run-id", "run-here", "-c", "request_max_retries=0"
    )
    assert main(local) == 1
    err = capsys.readouterr().err
    assert "Temporal" not in err and "corral fanout: run run-here (3 items)" in err


@pytest.mark.anyio
async def test_without_temporalio_local_runs_work_and_temporal_says_to_install_it(
    workspace: Path, tmp_path: Path
) -> None:
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text("import sys\nsys.modules['temporalio'] = None\n")
    path = os.pathsep.join(p for p in (str(hide), os.environ.get("PYTHONPATH", "")) if p)
    async with serve_model_server(reporter) as model:
        env = corral_env(tmp_path / "home", model.base_url, PYTHONPATH=path)
        local = await run_corral(fanout_args(), env=env, cwd=workspace)
        temporal = await run_corral(
            fanout_args("--executor", "temporal"), env=env, cwd=workspace, deadline=FAIL_FAST
        )
    assert local.code == 0, local.stderr
    assert results(workspace) == [{"n": n} for n in range(3)]
    assert temporal.code == 2
    assert_one_clean_error(temporal, "pip install 'corral[temporal]'", "--executor local")


def says_hi(request: dict[str, Any]) -> Any:
    return "hi"


@pytest.mark.anyio
async def test_an_exec_on_temporal_names_its_run_once_the_workflow_started(
    temporal_address: str, workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    async with serve_model_server(says_hi) as model, corral_worker(temporal_address, "a", home):
        args = ["exec", "--executor", "temporal", "--temporal-address", temporal_address]
        env = corral_env(home, model.base_url)
        done = await run_corral([*args, "--run-id", "run-told", "say hi"], env=env, cwd=workspace)
    assert done.code == 0, done.stderr
    assert done.stderr.startswith(
        "corral exec: run run-told (see it with `corral status run-told`)\n"
    )
    assert done.stdout.strip() == "hi"


@pytest.mark.anyio
async def test_a_fanout_on_temporal_runs_on_a_corral_worker_and_writes_its_results(
    temporal_address: str, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    telemetry = {"OTEL_METRICS_EXPORTER": "none", "OTEL_SERVICE_NAME": "corral-worker"}
    async with otlp_receiver() as receiver, serve_model_server(reporter) as model:
        endpoint = f"http://127.0.0.1:{receiver.port}"
        for name, value in {**telemetry, "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}.items():
            monkeypatch.setenv(name, value)  # the worker's environment
        async with corral_worker(temporal_address, "alpha", home):
            env = corral_env(home, model.base_url, **telemetry)
            env.update(OTEL_EXPORTER_OTLP_ENDPOINT=endpoint, OTEL_SERVICE_NAME="corral-cli")
            args = ["--executor", "temporal", "--temporal-address", temporal_address]
            done = await run_corral(
                fanout_args(*args, "--run-id", "run-far"), env=env, cwd=workspace
            )
    assert done.code == 0, done.stderr
    assert done.stderr.startswith("corral fanout: run run-far (3 items)\n")
    assert "3 done, 0 failed of 3 items" in done.stderr
    assert results(workspace) == [{"n": n} for n in range(3)]
    client = await connect(TemporalSettings(address=temporal_address))
    run = await client.get_workflow_handle("run-far").describe()
    assert run.status == WorkflowExecutionStatus.COMPLETED, "the run was a workflow there"
    spans = receiver.spans
    roots = [s for s in spans if s.span.name == "invoke_workflow corral"]
    assert [r.service for r in roots] == ["corral-cli"], "the command opens the run's trace"
    assert {s.span.trace_id for s in spans} == {roots[0].span.trace_id}, "one trace per run"
    worker_spans = [s.span.name for s in spans if s.service == "corral-worker"]
    assert worker_spans.count("RunWorkflow:corral.ItemWorkflow") == 3
    assert sum(name.startswith("chat ") for name in worker_spans) == 6
