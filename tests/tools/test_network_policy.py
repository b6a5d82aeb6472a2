"""A network restricted by domain, end to end: real bubblewrap, corral's proxy, loopback hosts.

The sandbox's only way out is the proxy; names under `.test` map to a loopback server through
the proxy's resolver, so nothing leaves the machine.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import anyio
import pytest

from corral.tools import PermissionProfile, SandboxMode
from corral.tools._sandbox import BubblewrapSandbox, CommandResult

from .netproxy_support import BODY, DEADLINE, loopback_resolver, serve_loopback
from .sandbox_support import PYTHON, Layout, make_layout

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap"),
]

FETCH = """
import sys, urllib.request, urllib.error
try:
    print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())
except urllib.error.HTTPError as exc:
    print(exc.code, exc.read().decode())
"""
TUNNEL = """
import http.client, sys
conn = http.client.HTTPConnection("127.0.0.1", 3128, timeout=10)
conn.set_tunnel(sys.argv[1], int(sys.argv[2]))
conn.request("GET", "/")
print(conn.getresponse().read().decode())
"""
DIRECT = """
import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
    print("connected")
except OSError as exc:
    print("failed", exc.errno)
"""


@pytest.fixture
def layout() -> Iterator[Layout]:
    yield from make_layout()


def restricted(
    layout: Layout, allowed: tuple[str, ...], denied: tuple[str, ...] = ()
) -> PermissionProfile:
    return PermissionProfile(
        sandbox=SandboxMode.WORKSPACE_WRITE,
        writable_roots=(layout.workspace,),
        network=True,
        allowed_domains=allowed,
        denied_domains=denied,
    )


async def run_python(layout: Layout, profile: PermissionProfile, *argv: str) -> CommandResult:
    sandbox = BubblewrapSandbox(resolver=loopback_resolver)
    with anyio.fail_after(DEADLINE):
        return await sandbox.run(
            [PYTHON, "-c", *argv],
            cwd=layout.workspace,
            profile=profile,
            timeout=DEADLINE,
            env={},
            output_budget=64_000,
        )


async def test_an_allowed_host_is_reached_through_the_proxy(layout: Layout) -> None:
    async with serve_loopback() as server:
        profile = restricted(layout, ("allowed.test",))
        url = f"http://allowed.test:{server.port}/page"
        result = await run_python(layout, profile, FETCH, url)
    assert result.output.strip() == BODY.decode()
    assert result.network_denials == ()
    assert server.heads[0].startswith(b"GET /page HTTP/1.1\r\n")


async def test_a_connect_tunnel_to_an_allowed_host_works(layout: Layout) -> None:
    async with serve_loopback() as server:
        profile = restricted(layout, ("api.allowed.test",))
        result = await run_python(layout, profile, TUNNEL, "api.allowed.test", str(server.port))
    assert result.output.strip() == BODY.decode()


async def test_a_host_outside_the_policy_is_refused_with_a_clear_403_and_counted(
    layout: Layout,
) -> None:
    async with serve_loopback() as server:
        profile = restricted(layout, ("**.allowed.test",), denied=("secret.allowed.test",))
        for host in ("denied.test", "secret.allowed.test"):
            result = await run_python(layout, profile, FETCH, f"http://{host}:{server.port}/")
            assert result.output.startswith("403 corral network policy: " + host)
    assert server.heads == []
    assert result.network_denials == ("secret.allowed.test: it matches denied_domains",)


async def test_without_the_proxy_variables_a_connection_fails_instead_of_going_direct(
    layout: Layout,
) -> None:
    async with serve_loopback() as server:
        profile = restricted(layout, ("allowed.test", "127.0.0.1"))
        result = await run_python(layout, profile, DIRECT, str(server.port))
    assert result.output.startswith("failed")
    assert server.heads == []


async def test_the_sandbox_sees_the_proxy_variables_only_when_restricted(layout: Layout) -> None:
    show = "import os; print(os.environ.get('HTTPS_PROXY'), os.environ.get('ALL_PROXY'))"
    restricted_run = await run_python(layout, restricted(layout, ("allowed.test",)), show)
    assert restricted_run.output.split() == ["http://127.0.0.1:3128"] * 2
    plain = PermissionProfile.for_workspace(SandboxMode.WORKSPACE_WRITE, layout.workspace)
    assert (await run_python(layout, plain, show)).output.split() == ["None", "None"]
