"""An exec run's workflow input, built and checked where the run is asked for.

The root agent's spec is built by the same code as `corral exec` (`build_root_spec`), with the
collab tools when the role is supervisor. Run-specific tools other than the collab tools cannot
travel to a worker, so asking for one is refused before anything starts.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from corral.agents import CorralConfig

from ..runs import ExecJob, RunSetup, build_root_spec, new_id
from ..supervisor import COLLAB_TOOL_NAMES
from ._errors import TemporalSetupError
from ._wire import ActivityPolicy, AgentInput, CollabLimits, ExecRunInput, WireSpec


def exec_input(
    config: CorralConfig, job: ExecJob, *, setup: RunSetup, policy: ActivityPolicy
) -> ExecRunInput:
    """The `RunWorkflow` argument of a run whose root agent works on `job.task`."""
    extra = tuple(setup.tool_providers)
    foreign = [name for name in extra if name not in COLLAB_TOOL_NAMES]
    if foreign:
        raise TemporalSetupError(
            f"tools {', '.join(foreign)} exist only in this process and cannot run on a "
            "Temporal worker; run with --executor local"
        )
    env: Mapping[str, str] = os.environ if setup.env is None else setup.env
    run_id = job.run_id or new_id("run")
    spec = build_root_spec(
        config, cwd=job.cwd, env=env, run_id=run_id, role=job.role, extra_tools=extra
    )
    agents = config.agents
    limits = CollabLimits(
        max_depth=agents.max_depth,
        max_threads=agents.max_threads,
        max_queued_spawns=agents.max_queued_spawns,
        personality=config.personality,
        roles=agents.roles,
    )
    root = AgentInput(
        run_id=run_id, spec=WireSpec.of(spec), task=job.task, limits=limits, policy=policy
    )
    return ExecRunInput(run_id=run_id, root=root, role=job.role)
