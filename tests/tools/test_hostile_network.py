"""Attacks on the network policy: what a command (or the model behind it) may send the proxy to
reach a host the policy does not allow, and configs or spawns that would widen the policy."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from corral.agents import load_config
from corral.orchestrator.supervisor import child_profile
from corral.tools import PermissionProfile
from corral.tools._domains import DomainPolicy, IpAddress
from corral.tools._netproxy import NetworkProxy, Resolver
from corral.tools._netproxy._proxy import SOCKET_NAME, serve_proxy

from .netproxy_support import DEADLINE, loopback_resolver, serve_loopback

pytestmark = [pytest.mark.hostile, pytest.mark.anyio]

POLICY = DomainPolicy(
    allowed=("allowed.test", "*.wild.test", "**.pkgs.test"), denied=("bad.pkgs.test",)
)


async def ask(request: str, *, resolver: Resolver = loopback_resolver) -> tuple[str, NetworkProxy]:
    proxy = NetworkProxy(POLICY, resolver)
    with anyio.fail_after(DEADLINE):
        async with serve_proxy(proxy) as folder:
            stream = await anyio.connect_unix(folder / SOCKET_NAME)
            async with stream:
                await stream.send(request.encode())
                answer = b""
                try:
                    while not answer.endswith(b"\n") or b"\r\n\r\n" not in answer:
                        answer += await stream.receive()
                except anyio.EndOfStream:
                    pass
    return answer.decode(), proxy


def first_line(answer: str) -> str:
    return answer.split("\r\n", 1)[0]


# Each request names (one way or another) a host the policy must not let through.
ATTACKS = {
    "not-listed": "GET http://evil.test:{port}/ HTTP/1.1\r\n\r\n",
    "suffix-trick": "GET http://allowed.test.evil.test:{port}/ HTTP/1.1\r\n\r\n",
    "prefix-trick": "GET http://evilallowed.test:{port}/ HTTP/1.1\r\n\r\n",
    "userinfo": "GET http://allowed.test@evil.test:{port}/ HTTP/1.1\r\n\r\n",
    "userinfo-connect": "CONNECT allowed.test@evil.test:{port} HTTP/1.1\r\n\r\n",
    "backslash": "GET http://evil.test\\@allowed.test:{port}/ HTTP/1.1\r\n\r\n",
    "percent": "GET http://allowed.test%2eevil.test:{port}/ HTTP/1.1\r\n\r\n",
    "ipv4-literal": "GET http://127.0.0.1:{port}/ HTTP/1.1\r\n\r\n",
    "ipv6-literal": "CONNECT [::1]:{port} HTTP/1.1\r\n\r\n",
    "ipv4-mapped-ipv6": "CONNECT [::ffff:127.0.0.1]:{port} HTTP/1.1\r\n\r\n",
    "decimal-ip": "GET http://2130706433:{port}/ HTTP/1.1\r\n\r\n",
    "hex-ip": "GET http://0x7f.0.0.1:{port}/ HTTP/1.1\r\n\r\n",
    "short-ip": "CONNECT 127.1:{port} HTTP/1.1\r\n\r\n",
    "nip-io-style": "GET http://allowed.test.127.0.0.1.nip.io:{port}/ HTTP/1.1\r\n\r\n",
    "double-trailing-dot": "GET http://allowed.test..:{port}/ HTTP/1.1\r\n\r\n",
    "leading-zero-ip": "CONNECT 127.000.000.001:{port} HTTP/1.1\r\n\r\n",
    "octal-ip": "CONNECT 0177.0.0.1:{port} HTTP/1.1\r\n\r\n",
    "ipv6-scope": "CONNECT [fe80::1%25lo]:{port} HTTP/1.1\r\n\r\n",
    "space-in-target": "GET http://allowed.test :{port}/ HTTP/1.1\r\n\r\n",
    "tab-in-host": "GET http://allowed.test\tevil.test:{port}/ HTTP/1.1\r\n\r\n",
    "rebinding-wildcard": "GET http://anything.wild.test:{port}/ HTTP/1.1\r\n\r\n",
    "rebinding-apex-wildcard": "CONNECT mirror.pkgs.test:{port} HTTP/1.1\r\n\r\n",
    "denied-wins": "CONNECT bad.pkgs.test:{port} HTTP/1.1\r\n\r\n",
    "denied-case-dot": "CONNECT BAD.Pkgs.Test.:{port} HTTP/1.1\r\n\r\n",
    "wildcard-is-not-apex": "GET http://wild.test:{port}/ HTTP/1.1\r\n\r\n",
    "host-header-mismatch": "GET http://allowed.test:{port}/ HTTP/1.1\r\nHost: evil.test\r\n\r\n",
    "connect-host-header": "CONNECT allowed.test:{port} HTTP/1.1\r\nHost: evil.test:{port}\r\n\r\n",
    "host-header-port": "GET http://allowed.test:{port}/ HTTP/1.1\r\nHost: allowed.test:22\r\n\r\n",
    "two-host-headers": (
        "GET http://allowed.test:{port}/ HTTP/1.1\r\nHost: allowed.test:{port}\r\nHost: evil.test"
        "\r\n\r\n"
    ),
    "connect-second-port": "CONNECT allowed.test:{port}:22 HTTP/1.1\r\n\r\n",
    "connect-no-port": "CONNECT allowed.test HTTP/1.1\r\n\r\n",
    "origin-form": "GET / HTTP/1.1\r\nHost: allowed.test:{port}\r\n\r\n",
    "https-absolute": "GET https://allowed.test:{port}/ HTTP/1.1\r\n\r\n",
    "port-zero": "CONNECT allowed.test:0 HTTP/1.1\r\n\r\n",
    "folded-header": "GET http://allowed.test:{port}/ HTTP/1.1\r\n Host: evil.test\r\n\r\n",
}


@pytest.mark.parametrize("attack", ATTACKS.values(), ids=ATTACKS.keys())
async def test_a_request_for_a_host_outside_the_policy_is_refused_and_reaches_nothing(
    attack: str,
) -> None:
    async with serve_loopback() as server:
        answer, proxy = await ask(attack.format(port=server.port))
    assert first_line(answer).split(" ")[1] in ("400", "403"), answer
    assert server.heads == []
    assert len(proxy.denials) == 1


ALLOWED = {
    "exact": "GET http://allowed.test:{port}/x HTTP/1.1\r\n\r\n",
    "case-and-dot": "GET http://ALLOWED.Test.:{port}/x HTTP/1.1\r\n\r\n",
    "connect": "CONNECT allowed.test:{port} HTTP/1.1\r\nHost: allowed.test:{port}\r\n\r\n",
}


@pytest.mark.parametrize("request_text", ALLOWED.values(), ids=ALLOWED.keys())
async def test_the_same_proxy_serves_an_allowed_host(request_text: str) -> None:
    async with serve_loopback() as server:
        answer, proxy = await ask(request_text.format(port=server.port))
    assert first_line(answer) in ("HTTP/1.1 200 OK", "HTTP/1.1 200 Connection Established")
    assert proxy.denials == []


async def test_a_refusal_says_which_host_and_why_and_is_counted() -> None:
    answer, proxy = await ask("CONNECT evil.test:443 HTTP/1.1\r\n\r\n")
    assert first_line(answer) == "HTTP/1.1 403 Forbidden"
    assert answer.endswith(
        "corral network policy: evil.test refused: it is not in allowed_domains\n"
    )
    assert proxy.denials == ["evil.test: it is not in allowed_domains"]


async def test_an_exactly_allowed_name_resolving_to_a_metadata_address_is_still_checked() -> None:
    async def rebinding(name: str, port: int) -> Sequence[IpAddress]:
        return [ipaddress.ip_address("169.254.169.254")]

    answer, _ = await ask("GET http://x.wild.test/ HTTP/1.1\r\n\r\n", resolver=rebinding)
    assert "non-public address 169.254.169.254" in answer


@pytest.mark.parametrize(
    ("parent", "asked", "expected"),
    [
        (("allowed.test",), ("*",), ("allowed.test",)),
        (("allowed.test",), ("allowed.test", "evil.test"), ("allowed.test",)),
        (("api.pkgs.test",), ("**.pkgs.test",), ("api.pkgs.test",)),
        (("*.pkgs.test",), ("pkgs.test", "a.pkgs.test"), ("a.pkgs.test",)),
        (("**.pkgs.test",), ("*.pkgs.test", "pkgs.test"), ("*.pkgs.test", "pkgs.test")),
        (("127.0.0.1",), ("**.test", "127.0.0.2"), ()),
    ],
)
def test_a_child_never_gets_a_wider_domain_set_than_its_parent(
    parent: tuple[str, ...], asked: tuple[str, ...], expected: tuple[str, ...], tmp_path: Path
) -> None:
    profile = PermissionProfile(network=True, allowed_domains=parent, denied_domains=("x.test",))
    child = child_profile(profile, cwd=tmp_path, allowed_domains=asked)
    assert child.allowed_domains == expected
    assert child.denied_domains == ("x.test",)
    assert child.network_mode == "restricted"


@pytest.mark.parametrize(
    "project_toml",
    [
        'network_access = true\n[network]\nallowed_domains = ["*"]\n',
        "[network]\ndenied_domains = []\n",
        '[network]\nallowed_domains = ["**.evil.test"]\n',
    ],
)
def test_an_untrusted_project_cannot_change_the_network_policy(
    project_toml: str, tmp_path: Path
) -> None:
    home, project = tmp_path / "home" / ".corral", tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    home.mkdir(parents=True)
    user = 'network_access = true\n[network]\nallowed_domains = ["allowed.test"]\n'
    (home / "config.toml").write_text(user + 'denied_domains = ["bad.allowed.test"]\n')
    (project / ".corral").mkdir()
    (project / ".corral" / "config.toml").write_text(project_toml)
    env = {"HOME": str(home.parent), "CORRAL_HOME": str(home)}
    config = load_config(cwd=project, env=env).config
    assert config.network.allowed_domains == ("allowed.test",)
    assert config.network.denied_domains == ("bad.allowed.test",)


@pytest.mark.parametrize("bad", ["*", "evil.*", "**", "*.1.2.3.4", "a b.test", "x@y.test"])
def test_a_denied_or_malformed_pattern_is_refused_with_the_forms_to_use(
    bad: str, tmp_path: Path
) -> None:
    with pytest.raises(
        ValueError, match=r"\*\*\.example\.com|not a host name|wildcard|allowed domain only"
    ):
        PermissionProfile(network=True, allowed_domains=("a.test",), denied_domains=(bad,))
