"""corral: asynchronous multi-agent orchestration against any OpenAI-compatible model.

The Python face is small: `load_config`, `run_agent` and `run_agents` (with your own function
tools, made by `function_tool` or passed as plain functions), `run_fanout`, and the scripted model
server (`serve_model_server`) to run all of it offline. The packages beneath are
`corral.tools` ← `corral.agents` ← `corral.orchestrator`, with `corral.observability` beside them.
"""

from typing import TYPE_CHECKING

from corral._lazy import lazy_exports
from corral.orchestrator._version import corral_version

if TYPE_CHECKING:
    from corral.orchestrator.fanout import FanoutOutcome as FanoutOutcome
    from corral.orchestrator.model_server import ModelServerOptions as ModelServerOptions
    from corral.orchestrator.model_server import serve_model_server as serve_model_server
    from corral.orchestrator.runs import SingleOutcome as SingleOutcome
    from corral.tools import Tool as Tool
    from corral.tools import ToolOutput as ToolOutput
    from corral.tools import function_tool as function_tool

    from ._api import load_config as load_config
    from ._api import run_agent as run_agent
    from ._api import run_agents as run_agents
    from ._api import run_fanout as run_fanout

__version__ = corral_version()
__getattr__ = lazy_exports(
    __name__,
    {
        "FanoutOutcome": "corral.orchestrator.fanout",
        "ModelServerOptions": "corral.orchestrator.model_server",
        "serve_model_server": "corral.orchestrator.model_server",
        "SingleOutcome": "corral.orchestrator.runs",
        "Tool": "corral.tools",
        "ToolOutput": "corral.tools",
        "function_tool": "corral.tools",
        "load_config": "._api",
        "run_agent": "._api",
        "run_agents": "._api",
        "run_fanout": "._api",
    },
)

__all__ = [
    "FanoutOutcome",
    "ModelServerOptions",
    "SingleOutcome",
    "Tool",
    "ToolOutput",
    "__version__",
    "function_tool",
    "load_config",
    "run_agent",
    "run_agents",
    "run_fanout",
    "serve_model_server",
]
