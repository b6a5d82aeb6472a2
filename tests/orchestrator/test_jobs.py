"""Jobs: one declaration of each run kind's inputs, which the CLI and the service follow, and
worker templates that shape the workers' config without ever widening it."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from corral.agents import CorralConfig
from corral.orchestrator import ExecJob, FanoutJob, WorkerTemplate
from corral.orchestrator.cli._main import build_parser
from corral.orchestrator.runs import Job, JobInputError, RefactorJob, ReviewJob, TriageJob
from corral.orchestrator.service._models import (
    ExecRequest,
    FanoutRequest,
    RefactorRequest,
    ReviewRequest,
    TriageRequest,
)
from corral.tools import ApprovalPolicy, SandboxMode

NOT_FIELDS = {"help", "json", "model", "base_url", "api", "config", "sandbox", "profile", "quiet"}
NOT_FIELDS |= {"executor", "temporal_address", "temporal_namespace"}
"""Flags that choose the config, the executor or the output, not the job."""


@dataclass(frozen=True)
class Kind:
    """One run kind: its command, its job and its request body, and where they differ."""

    command: str
    job: type[BaseModel]
    request: type[BaseModel]
    flag_of: dict[str, str] = field(default_factory=dict)
    """Job fields whose flag is spelled otherwise (`--cd`, `--schema`)."""
    not_flags: frozenset[str] = frozenset()
    """Job fields no flag sets (the kind is the command; the others are the command's own)."""
    report_flags: frozenset[str] = frozenset()
    """Flags that choose the report's files or verdict, not what runs."""
    local_only: frozenset[str] = frozenset()
    """Job fields a request does not carry: the folder is `cd`, reports stay on the server."""


KINDS = (
    Kind(
        "exec",
        ExecJob,
        ExecRequest,
        flag_of={"cwd": "cd"},
        not_flags=frozenset({"kind"}),
        local_only=frozenset({"kind", "cwd"}),
    ),
    Kind(
        "fanout",
        FanoutJob,
        FanoutRequest,
        flag_of={"cwd": "cd", "result_schema": "schema"},
        # The workers' shape is the default, and the kind journaled the command's own.
        not_flags=frozenset({"kind", "worker", "run_kind"}),
        local_only=frozenset({"kind", "cwd", "out", "worker", "run_kind", "processes"}),
    ),
    Kind(
        "review",
        ReviewJob,
        ReviewRequest,
        not_flags=frozenset({"kind"}),
        report_flags=frozenset({"fail_on", "format", "out"}),
        local_only=frozenset({"kind"}),
    ),
    Kind(
        "refactor",
        RefactorJob,
        RefactorRequest,
        not_flags=frozenset({"kind", "worktrees_dir"}),  # tests choose where worktrees go
        local_only=frozenset({"kind", "worktrees_dir"}),
    ),
    Kind(
        "triage",
        TriageJob,
        TriageRequest,
        # `--repo` is the workers' folder and gives them the read-only tools to look in it.
        flag_of={"cwd": "repo"},
        not_flags=frozenset({"kind", "tools", "max_result_tries", "similarity_floor"}),
        local_only=frozenset({"kind", "cwd", "out", "tools", "max_result_tries"})
        | {"similarity_floor"},
    ),
)


def command_flags(kind: Kind) -> set[str]:
    parser = build_parser([kind.command])
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    flags = {action.dest for action in sub.choices[kind.command]._actions}
    return flags - NOT_FIELDS - kind.report_flags


def job_fields(kind: Kind) -> set[str]:
    return {kind.flag_of.get(name, name) for name in kind.job.model_fields} - kind.not_flags


def default_of(info: FieldInfo) -> Any:
    value = info.get_default(call_default_factory=True)
    return tuple(value) if isinstance(value, list) else value


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.command)
def test_every_field_of_a_job_is_a_flag_of_its_command_and_every_flag_a_field(
    kind: Kind,
) -> None:
    assert command_flags(kind) == job_fields(kind)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.command)
def test_the_service_request_carries_the_job_fields_with_the_same_defaults(kind: Kind) -> None:
    for name, info in kind.job.model_fields.items():
        if name in kind.local_only:
            continue
        assert name in kind.request.model_fields, name
        if not info.is_required():
            assert default_of(kind.request.model_fields[name]) == default_of(info), name


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.command)
def test_every_run_kind_is_a_job_told_apart_by_its_kind(kind: Kind) -> None:
    assert kind.job.model_fields["kind"].default == kind.command
    assert kind.job in get_args(get_args(Job)[0])


@pytest.mark.parametrize("count", ["concurrency", "max_result_tries"])
def test_a_fanout_job_refuses_a_count_below_one_when_it_is_made(count: str) -> None:
    with pytest.raises(JobInputError, match=f"{count} must be at least 1, not 0"):
        FanoutJob.model_validate(
            {"items": [{"a": 1}], "template": "{a}", "result_schema": {}, "cwd": ".", count: 0}
        )


@pytest.mark.parametrize(
    ("job", "fields", "count"),
    [
        (ReviewJob, {"repo": ".", "range": "a..b"}, "max_unit_lines"),
        (ReviewJob, {"repo": ".", "range": "a..b"}, "concurrency"),
        (RefactorJob, {"repo": ".", "instruction": "rename"}, "concurrency"),
        (RefactorJob, {"repo": ".", "instruction": "rename"}, "max_attempts"),
    ],
)
def test_a_pipeline_job_refuses_a_count_below_one_when_it_is_made(
    job: type[BaseModel], fields: dict[str, Any], count: str
) -> None:
    with pytest.raises(JobInputError, match=f"{count} must be at least 1, not 0"):
        job.model_validate({**fields, count: 0})


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
