"""A run whose network is restricted by domain, end to end: `corral exec` with the real CLI, a
loopback model server, a loopback web server, real bubblewrap and corral's proxy.

The allowed host is the IP literal `127.0.0.1` (an exact entry, so a loopback address is fine);
`127.0.0.2` reaches the same machine but is not listed, so the proxy refuses it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from corral.orchestrator.model_server import serve_model_server
from tests._scripted import Supervise, texts
from tests.tools.netproxy_support import BODY, serve_loopback
from tests.tools.sandbox_support import PYTHON  # the real interpreter: the sandbox hides /tmp

from ._cli import corral_env, run_corral

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap"),
]

FETCH = (
    "import sys, urllib.request, urllib.error\n"
    "for url in sys.argv[1:]:\n"
    "    try:\n"
    "        print(urllib.request.urlopen(url, timeout=10).read().decode())\n"
    "    except urllib.error.HTTPError as exc:\n"
    "        print(exc.code, exc.read().decode())\n"
)


def fetching(port: int, script: Path) -> Any:
    def policy(request: dict[str, Any]) -> Any:
        if any(i.get("type") == "function_call_output" for i in request["input"]):
            return "fetched"
        urls = f"http://127.0.0.1:{port}/ http://127.0.0.2:{port}/"
        arguments = json.dumps({"command": f"{PYTHON} {script} {urls}"})
        return [{"type": "function_call", "call_id": "c1", "name": "shell", "arguments": arguments}]

    return policy


async def test_a_restricted_run_reaches_the_allowed_host_only_and_status_counts_the_refusal(
    tmp_path: Path,
) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    (work / ".git").mkdir(parents=True)
    script = work / "fetch.py"
    script.write_text(FETCH)
    (home / "config.toml").write_text(
        'network_access = true\n[network]\nallowed_domains = ["127.0.0.1"]\n'
    )
    async with serve_loopback() as web, serve_model_server(fetching(web.port, script)) as model:
        env = corral_env(home, model.base_url)
        done = await run_corral(["exec", "--run-id", "run-net", "fetch"], env=env, cwd=work)
        assert done.code == 0, done.stderr
        requests = model.requests
    first, second = requests[0], requests[1]
    context = json.dumps(first["normalised"]["input"])
    assert (
        '<network enabled=\\"true\\">\\n    <allowed>127.0.0.1</allowed>\\n  </network>' in context
    )
    answer = next(
        i for i in second["normalised"]["input"] if i.get("type") == "function_call_output"
    )
    assert BODY.decode() in answer["output"]
    assert (
        "403 corral network policy: 127.0.0.2 refused: it is not in allowed_domains"
        in (answer["output"])
    )
    assert len(web.heads) == 1
    status = await run_corral(["status", "run-net", "--json"], env=env, cwd=work)
    report = json.loads(status.stdout)
    assert [a["network_denials"] for a in report["agents"]] == [1]
    human = await run_corral(["status", "run-net"], env=env, cwd=work)
    assert "network denials: 1" in human.stdout


async def test_a_worker_asking_for_wider_domains_is_shown_the_intersection(
    tmp_path: Path,
) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    (work / ".git").mkdir(parents=True)
    (home / "config.toml").write_text(
        'network_access = true\n[network]\nallowed_domains = ["pypi.org", "**.pythonhosted.org"]\n'
        "[agents]\nmax_depth = 1\n"
    )
    wider = {"message": "install", "allowed_domains": ["*", "files.pythonhosted.org", "evil.test"]}
    supervise = Supervise({"spawn-w": wider}, last="worker done")
    async with serve_model_server(supervise) as model:
        env = corral_env(home, model.base_url)
        done = await run_corral(["exec", "--role", "supervisor", "go"], env=env, cwd=work)
        assert done.code == 0, done.stderr
        requests = [r["normalised"] for r in model.requests]
    worker = next(r for r in requests if any("<subagent_context>" in t for _, t in texts(r)))
    context = next(t for _, t in texts(worker) if t.startswith("<environment_context>"))
    assert (
        '  <network enabled="true">\n'
        "    <allowed>**.pythonhosted.org</allowed>\n"
        "    <allowed>files.pythonhosted.org</allowed>\n"
        "    <allowed>pypi.org</allowed>\n"
        "  </network>\n"
    ) in context
