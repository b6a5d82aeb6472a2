"""Attacks on `corral fanout --processes N` through Python files in the folder it was run from.

A worker process is started as `python -m corral.orchestrator._procs FD` in the parent's
working folder, usually the repository the run works on; `python -m` puts that folder first on
`sys.path`. A repository (or an agent of an earlier run, which may write there) that holds a
`corral/` package, or a module named like one corral imports (`anyio.py`, `json.py`), runs its
code in every worker process: outside the sandbox, with the model key in its environment.
"""

from __future__ import annotations

import socket
from pathlib import Path

import anyio
import pytest

from corral.orchestrator._procs._parent import _reap, _spawn

pytestmark = [pytest.mark.anyio, pytest.mark.hostile]

DEADLINE = 60.0
PLANTED = {
    "corral-package": "corral/__init__.py",
    "stdlib-name": "json.py",
    "dependency-name": "anyio.py",
}


@pytest.mark.parametrize("planted", list(PLANTED.values()), ids=list(PLANTED))
async def test_a_worker_process_never_imports_a_module_from_the_folder_it_was_started_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, planted: str
) -> None:
    repo, marker = tmp_path / "repo", tmp_path / "ran"
    module = repo / planted
    module.parent.mkdir(parents=True)
    module.write_text(f"open({str(marker)!r}, 'w').write('ran')\nraise SystemExit(3)\n")
    monkeypatch.chdir(repo)
    ours, theirs = socket.socketpair()
    try:
        process = await _spawn(theirs.fileno())
    finally:
        theirs.close()
    ours.close()  # no init message: a real worker ends at once on the closed channel
    with anyio.fail_after(DEADLINE):
        await _reap(process)
    assert not marker.exists()
