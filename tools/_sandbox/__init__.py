"""Running commands confined to a permission profile: the seam, bubblewrap, and a twin.

`Sandbox` is the protocol; `BubblewrapSandbox` is production; `RecordingSandbox` records calls
and answers scripted results for tests of code above the seam.
"""

from ._bwrap import BubblewrapSandbox as BubblewrapSandbox
from ._bwrap_args import bwrap_options as bwrap_options
from ._env import command_environment as command_environment
from ._interactive import InteractiveProcess as InteractiveProcess
from ._recording import RecordingSandbox as RecordingSandbox
from ._recording import SandboxCall as SandboxCall
from ._types import TIMEOUT_EXIT_CODE as TIMEOUT_EXIT_CODE
from ._types import CommandResult as CommandResult
from ._types import Sandbox as Sandbox

__all__ = [
    "TIMEOUT_EXIT_CODE",
    "BubblewrapSandbox",
    "CommandResult",
    "InteractiveProcess",
    "RecordingSandbox",
    "Sandbox",
    "SandboxCall",
    "bwrap_options",
    "command_environment",
]
