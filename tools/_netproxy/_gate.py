"""How a sandboxed command reaches the proxy: the mount, the wrapper, the proxy variables.

The sandbox has its own network namespace (no route out). corral's proxy listens on a unix
socket in a host folder that is bound into the sandbox at `PROXY_MOUNT`; the command runs under
`_forwarder`, which relays the sandbox's `127.0.0.1:PROXY_PORT` to that socket, and the usual
proxy variables point there. A program that ignores them has no way out at all.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from .._domains import DomainPolicy
from ._proxy import SOCKET_NAME, NetworkProxy, Resolver, serve_proxy, system_resolver

PROXY_MOUNT = Path("/tmp/.corral-netproxy")
# The sandbox's network namespace is fresh, so Codex's usual proxy port is always free there.
PROXY_PORT = 3128
_PROXY_URL = f"http://127.0.0.1:{PROXY_PORT}"
PROXY_ENV = {
    **{name: _PROXY_URL for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")},
    **{name: _PROXY_URL for name in ("http_proxy", "https_proxy", "all_proxy")},
    # `localhost` is the sandbox's own loopback; every other host goes through the proxy.
    "NO_PROXY": "localhost",
    "no_proxy": "localhost",
}
_FORWARDER = Path(__file__).with_name("_forwarder.py")
_SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


@dataclass(frozen=True)
class ProxyGate:
    """One command's proxy: the host folder to bind, and what it refused."""

    folder: Path
    proxy: NetworkProxy

    def wrap(self, argv: Sequence[str]) -> list[str]:
        """`argv` run under the in-sandbox forwarder."""
        source = _FORWARDER.read_text(encoding="utf-8")
        socket_path = str(PROXY_MOUNT / SOCKET_NAME)
        return [
            sandbox_python(),
            "-I",
            "-S",
            "-c",
            source,
            socket_path,
            str(PROXY_PORT),
            "--",
            *argv,
        ]

    @property
    def denials(self) -> tuple[str, ...]:
        return tuple(self.proxy.denials)


@asynccontextmanager
async def open_proxy_gate(
    policy: DomainPolicy, resolver: Resolver = system_resolver
) -> AsyncIterator[ProxyGate]:
    """A proxy for one confined command, served until the block ends."""
    proxy = NetworkProxy(policy, resolver)
    async with serve_proxy(proxy) as folder:
        yield ProxyGate(folder, proxy)


def sandbox_python() -> str:
    """A Python the sandbox can run: the system's, else this one's."""
    found = shutil.which("python3", path=_SYSTEM_PATH)
    return found or os.path.realpath(sys.executable)
