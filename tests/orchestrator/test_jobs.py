"""Jobs: one declaration of each run kind's inputs, which the CLI and the service follow, and
worker templates that shape the workers' config without ever widening it."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from pydantic import BaseModel

from corral.agents import CorralConfig
from corral.orchestrator import ExecJob, FanoutJob, WorkerTemplate
from corral.orchestrator.cli._main import build_parser
from corral.orchestrator.runs import JobInputError
from corral.orchestrator.service._models import ExecRequest, FanoutRequest
from corral.tools import ApprovalPolicy, SandboxMode

FLAG_OF = {"cwd": "cd", "result_schema": "schema"}
"""Job fields whose flag is spelled otherwise (`--cd`, `--schema`)."""
NOT_FLAGS = {"kind", "worker"}
"""Job fields no command sets: the kind is the command, the workers' shape is the default."""
NOT_FIELDS = {"help", "json", "model", "base_url", "api", "config", "sandbox", "profile", "quiet"}
NOT_FIELDS |= {"executor", "temporal_address", "temporal_namespace"}
"""Flags that choose the config, the executor or the output, not the job."""


def command_flags(command: str) -> set[str]:
    parser = build_parser([command])
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {action.dest for action in sub.choices[command]._actions} - NOT_FIELDS


def job_fields(job: type[BaseModel]) -> set[str]:
    return {FLAG_OF.get(name, name) for name in job.model_fields} - NOT_FLAGS


@pytest.mark.parametrize(("command", "job"), [("exec", ExecJob), ("fanout", FanoutJob)])
def test_every_field_of_a_job_is_a_flag_of_its_command_and_every_flag_a_field(
    command: str, job: type[BaseModel]
) -> None:
    assert command_flags(command) == job_fields(job)


@pytest.mark.parametrize(
    ("request_model", "job"), [(ExecRequest, ExecJob), (FanoutRequest, FanoutJob)]
)
def test_the_service_request_carries_the_job_fields_with_the_same_defaults(
    request_model: type[BaseModel], job: type[BaseModel]
) -> None:
    local_only = {"kind", "cwd", "out", "worker"}  # cwd is `cd`; the report stays on the server
    for name, field in job.model_fields.items():
        if name in local_only:
            continue
        assert name in request_model.model_fields, name
        if not field.is_required():
            assert request_model.model_fields[name].default == field.default, name


@pytest.mark.parametrize("count", ["concurrency", "max_result_tries"])
def test_a_fanout_job_refuses_a_count_below_one_when_it_is_made(count: str) -> None:
    with pytest.raises(JobInputError, match=f"{count} must be at least 1, not 0"):
        FanoutJob.model_validate(
            {"items": [{"a": 1}], "template": "{a}", "result_schema": {}, "cwd": ".", count: 0}
        )


@pytest.mark.parametrize("configured", list(SandboxMode))
@pytest.mark.parametrize("asked", list(SandboxMode))
def test_a_worker_template_narrows_the_sandbox_and_never_widens_it(
    configured: SandboxMode, asked: SandboxMode, tmp_path: Path
) -> None:
    order = list(SandboxMode)
    config = CorralConfig(home=tmp_path, sandbox_mode=configured, writable_roots=(tmp_path,))
    shaped = WorkerTemplate(sandbox=asked).shape(config)
    assert SandboxMode(shaped.sandbox_mode) == min(configured, asked, key=order.index)
    if shaped.sandbox_mode == SandboxMode.READ_ONLY:
        assert shaped.writable_roots == ()


def test_a_worker_template_adds_its_instructions_after_the_configs_own(tmp_path: Path) -> None:
    config = CorralConfig(home=tmp_path, developer_instructions="Be brief.  ")
    template = WorkerTemplate(instructions="Triage.", approval=ApprovalPolicy.NEVER)
    shaped = template.shape(config)
    assert shaped.developer_instructions == "Be brief.\n\nTriage."
    assert shaped.approval_policy == ApprovalPolicy.NEVER
    assert WorkerTemplate().shape(config) is config


def test_a_job_is_frozen_and_takes_no_unknown_field(tmp_path: Path) -> None:
    job = ExecJob(task="t", cwd=tmp_path)
    with pytest.raises(ValueError, match="frozen"):
        job.task = "other"  # type: ignore[misc]
    with pytest.raises(ValueError, match="extra"):
        ExecJob.model_validate({"task": "t", "cwd": ".", "sandbox": "full-access"})
