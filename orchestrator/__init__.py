"""Many agents and the ways to run them: the CLI, the scripted model server and the demo.

Builds on `agents` (one agent) and `tools`; nothing below imports it. The names here are the
public face of starting a run: a job (`ExecJob`, `FanoutJob`, the workers' `WorkerTemplate`),
how its run is set up (`RunSetup`), and the executor that carries it out (`LocalExecutor`, or
the one `executor_from_settings` picks). The subpackages hold the rest: `runs`, `fanout`,
`pipelines`, `service`, `temporal`, `cli`.
"""

from typing import TYPE_CHECKING

from corral._lazy import lazy_exports

if TYPE_CHECKING:
    from .runs import ExecJob as ExecJob
    from .runs import Executor as Executor
    from .runs import ExecutorSettings as ExecutorSettings
    from .runs import FanoutJob as FanoutJob
    from .runs import Job as Job
    from .runs import LocalExecutor as LocalExecutor
    from .runs import RunSetup as RunSetup
    from .runs import SingleOutcome as SingleOutcome
    from .runs import WorkerTemplate as WorkerTemplate
    from .runs import executor_from_settings as executor_from_settings
    from .runs import resolve_executor_settings as resolve_executor_settings

__all__ = [
    "ExecJob",
    "Executor",
    "ExecutorSettings",
    "FanoutJob",
    "Job",
    "LocalExecutor",
    "RunSetup",
    "SingleOutcome",
    "WorkerTemplate",
    "executor_from_settings",
    "resolve_executor_settings",
]
__getattr__ = lazy_exports(__name__, dict.fromkeys(__all__, ".runs"))
