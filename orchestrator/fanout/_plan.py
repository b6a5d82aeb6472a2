"""A fan-out before it runs: inputs checked, tasks filled, and the settings the journal keeps.

`plan_fanout` does every check that can fail on the user's inputs, so a mistake stops the run
before anything is journaled or started. `FanoutSettings` is what the run record's `config`
holds: enough to resume the run from its id alone, including the prototype of every worker's
`AgentSpec` (model, endpoint, profile, budgets, tools; never the API key).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from corral.agents import AgentSpec, CorralConfig
from corral.tools import core_tool_names

from ..runs import (
    FanoutJob,
    WorkerTemplate,
    build_root_spec,
    new_id,
)
from ._errors import FanoutInputError, ItemsFileError
from ._items import FanoutItem, as_items
from ._report import REPORT_RESULT, WORKER_INSTRUCTIONS
from ._schema import ResultSchema
from ._template import Template

ITEM_TIMEOUT_S = 30 * 60.0
"""A worker's wall-time budget when the config sets none (Codex's fan-out item timeout)."""
STDOUT = "-"


class FanoutSettings(BaseModel):
    """The run record's `config` for a fan-out."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    template: str
    result_schema: Any
    concurrency: int = Field(ge=1)
    max_result_tries: int = Field(ge=1)
    out: str | None = None
    cwd: str
    sandbox: str
    items_source: str = "items"
    worker: dict[str, Any]

    def prototype(
        self,
        env: Mapping[str, str],
        base_url: str | None = None,
        config: CorralConfig | None = None,
    ) -> AgentSpec:
        """The workers' spec (its agent id is filled per item), moved to `base_url` if given;
        the key comes from `env`, only for an endpoint `config` (the user's, loaded now) names."""
        return AgentSpec.from_journal(self.worker, env=env, config=config, base_url=base_url)


@dataclass(frozen=True)
class FanoutPlan:
    """Checked inputs: the items, their tasks (same order), the template and the schema."""

    items: tuple[FanoutItem, ...]
    tasks: tuple[str, ...]
    template: Template
    schema: ResultSchema


def plan_fanout(
    items: Sequence[FanoutItem] | Sequence[Mapping[str, Any]],
    template: str,
    schema: Any,
) -> FanoutPlan:
    """Check the schema, the template and every item; raises `FanoutInputError` subclasses."""
    result_schema = schema if isinstance(schema, ResultSchema) else ResultSchema(schema)
    parsed = as_items(items)
    if not parsed:
        raise FanoutInputError("there are no items; give at least one JSON object, one per line")
    for item in parsed:
        _check_storable(item)
    filler = Template(template)
    tasks = filler.fill_all(parsed)
    return FanoutPlan(tuple(parsed), tuple(tasks), filler, result_schema)


def _check_storable(item: FanoutItem) -> None:
    try:
        json.dumps(item.data, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ItemsFileError(
            f"item {item.index} ({item.source} line {item.line}) cannot be stored as JSON: {exc}"
        ) from exc


def worker_tools(tools: Sequence[str] | None) -> tuple[str, ...]:
    """The workers' tools: the named core tools (default all), then `report_result`."""
    core = core_tool_names()
    wanted = core if tools is None else tuple(name for name in tools if name != REPORT_RESULT)
    unknown = sorted(set(wanted) - set(core))
    if unknown:
        raise FanoutInputError(
            f"unknown worker tool(s) {', '.join(unknown)}; choose from {', '.join(core)}"
        )
    return (*wanted, REPORT_RESULT)


def worker_prototype(
    config: CorralConfig,
    *,
    cwd: Path,
    env: Mapping[str, str],
    run_id: str,
    worker: WorkerTemplate,
) -> AgentSpec:
    """The spec every worker of the run shares, but for its agent id and nickname; `config`
    is already shaped by `worker` (`WorkerTemplate.shape`)."""
    spec = build_root_spec(config, cwd=cwd, env=env, run_id=run_id, role=worker.role)
    extra = config.developer_instructions
    developer = f"{extra.strip()}\n\n{WORKER_INSTRUCTIONS}" if extra else WORKER_INSTRUCTIONS
    budgets = config.budgets
    if budgets.max_wall_time_s is None:
        budgets = budgets.model_copy(update={"max_wall_time_s": ITEM_TIMEOUT_S})
    return spec.model_copy(
        update={
            "agent_id": "",
            "nickname": "worker",
            "tools": worker_tools(worker.tools),
            "developer_instructions": developer,
            "budgets": budgets,
        }
    )


@dataclass(frozen=True)
class PreparedFanout:
    """A fan-out job checked and made concrete: its run id, the config its workers are built
    from (shaped by the job's worker template), its plan, the workers' spec and its settings."""

    run_id: str
    config: CorralConfig
    plan: FanoutPlan
    prototype: AgentSpec
    settings: FanoutSettings


def prepare_fanout(config: CorralConfig, job: FanoutJob, env: Mapping[str, str]) -> PreparedFanout:
    """Check `job`'s inputs and make what both executors start it from; raises
    `FanoutInputError` subclasses before anything is journaled or sent."""
    plan = plan_fanout(job.items, job.template, job.result_schema)
    config = job.worker.shape(config)
    run_id = job.run_id or new_id("run")
    prototype = worker_prototype(config, cwd=job.cwd, env=env, run_id=run_id, worker=job.worker)
    settings = fanout_settings(config, job, plan, prototype)
    return PreparedFanout(run_id, config, plan, prototype, settings)


def fanout_settings(
    config: CorralConfig, job: FanoutJob, plan: FanoutPlan, prototype: AgentSpec
) -> FanoutSettings:
    """What the run record keeps of `job`: enough to resume it from its id alone."""
    width = config.agents.fanout_concurrency if job.concurrency is None else job.concurrency
    return FanoutSettings(
        template=job.template,
        result_schema=plan.schema.schema,
        concurrency=width,
        max_result_tries=job.max_result_tries,
        out=out_setting(job.out),
        cwd=str(job.cwd),
        sandbox=str(prototype.profile.sandbox),
        items_source=plan.items[0].source,
        worker=prototype.to_journal(),
    )


def out_setting(out: Path | str | None) -> str | None:
    """What the run record keeps of `out`: an absolute path, so a resume writes the same file."""
    if out is None or str(out) == STDOUT:
        return None if out is None else STDOUT
    return str(Path(out).expanduser().resolve())


def worker_spec(prototype: AgentSpec, agent_id: str, index: int) -> AgentSpec:
    """Item `index`'s worker; its nickname names the item, so a resume finds its agent."""
    return prototype.model_copy(update={"agent_id": agent_id, "nickname": f"item {index}"})


def item_of(nickname: str) -> int | None:
    """The item a worker's nickname names, or None for an agent that is no worker."""
    prefix, _, number = nickname.partition(" ")
    return int(number) if prefix == "item" and number.isdigit() else None
