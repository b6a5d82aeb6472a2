"""A fan-out's workers in several processes: the parent deals items and keeps the run's rate
limits and budget; each worker process runs its items through the same agent host and journal.

`run_in_processes` is the parent's entry; `python -m corral.orchestrator._procs FD` a worker's.
"""

from ._budget import SharedBudget as SharedBudget
from ._deal import ReadBack as ReadBack
from ._parent import ProcessRun as ProcessRun
from ._parent import WorkerProcessGone as WorkerProcessGone
from ._parent import default_processes as default_processes
from ._parent import is_loopback as is_loopback
from ._parent import run_in_processes as run_in_processes

__all__ = [
    "ProcessRun",
    "ReadBack",
    "SharedBudget",
    "WorkerProcessGone",
    "default_processes",
    "is_loopback",
    "run_in_processes",
]
