"""Attacks on the proxy's plain-HTTP relay: a request head that the proxy reads one way and the
upstream server another (a bare CR or LF, a NUL), to have a header or a request line the proxy
never checked reach the server."""

from __future__ import annotations

import anyio
import pytest

from corral.tools._domains import DomainPolicy
from corral.tools._netproxy import NetworkProxy
from corral.tools._netproxy._proxy import SOCKET_NAME, serve_proxy

from .netproxy_support import DEADLINE, loopback_resolver, serve_loopback

pytestmark = [pytest.mark.hostile, pytest.mark.anyio]

POLICY = DomainPolicy(allowed=("allowed.test",))

GET = "GET http://allowed.test:{port}"
SMUGGLED = {
    "bare-lf-in-a-header": GET + "/ HTTP/1.1\r\nX-A: 1\nHost: evil.test\r\n\r\n",
    "bare-cr-in-a-header": GET + "/ HTTP/1.1\r\nX-A: 1\rHost: evil.test\r\n\r\n",
    "lf-in-the-target": GET + "/x\nHost:evil.test HTTP/1.1\r\n\r\n",
    "cr-in-the-target": GET + "/x\rHost:evil.test HTTP/1.1\r\n\r\n",
    "nul-in-a-header": GET + "/ HTTP/1.1\r\nX-A: 1\x00Host: evil.test\r\n\r\n",
    "tab-in-the-target": GET + "/x\tHost:evil.test HTTP/1.1\r\n\r\n",
    "escape-in-a-header": GET + "/ HTTP/1.1\r\nX-A: \x1b[2J\r\n\r\n",
}


async def ask(request: str) -> tuple[str, list[bytes]]:
    proxy = NetworkProxy(POLICY, loopback_resolver)
    with anyio.fail_after(DEADLINE):
        async with serve_loopback() as server, serve_proxy(proxy) as folder:
            stream = await anyio.connect_unix(folder / SOCKET_NAME)
            async with stream:
                await stream.send(request.format(port=server.port).encode())
                answer = b""
                try:
                    while True:
                        answer += await stream.receive()
                except anyio.EndOfStream:
                    pass
            heads = list(server.heads)
    return answer.decode(), heads


@pytest.mark.parametrize("request_text", SMUGGLED.values(), ids=SMUGGLED.keys())
async def test_a_control_character_in_the_head_is_refused_before_any_upstream_sees_it(
    request_text: str,
) -> None:
    answer, heads = await ask(request_text)
    assert answer.startswith("HTTP/1.1 400 Bad Request")
    assert "control character" in answer
    assert heads == []


async def test_a_header_value_with_a_tab_is_still_relayed() -> None:
    answer, heads = await ask("GET http://allowed.test:{port}/ HTTP/1.1\r\nX-A: a\tb\r\n\r\n")
    assert answer.startswith("HTTP/1.1 200 OK")
    assert len(heads) == 1 and b"X-A: a\tb" in heads[0]
