"""Reading what a client asks the proxy for: a CONNECT tunnel or one plain HTTP request.

Parsing is strict on purpose: the target's authority must be a bare host (a name, an IPv4
literal or a bracketed IPv6 literal) and a port, with no userinfo, percent signs or spaces; a
`Host` header must name the same host and port as the request line, so a client cannot have
one host checked and another one served; a control character anywhere in the head (a bare CR or
LF that the upstream server would read as a line break) is refused for the same reason. What
does not parse is refused with a reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .._domains import BadHost, Host, parse_host

MAX_HEAD_BYTES = 16 * 1024
_AUTHORITY = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::([0-9]{1,5}))?")
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_HOP_BY_HOP = frozenset({"proxy-connection", "proxy-authorization", "connection", "keep-alive"})


class Refused(Exception):
    """The request cannot be served; `status` and the message go back to the client."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.counted = False  # already among the proxy's denials


@dataclass(frozen=True)
class ProxyRequest:
    """A parsed request: where to, and (for plain HTTP) the head to send upstream."""

    host: Host
    port: int
    tunnel: bool
    upstream_head: bytes = b""


def parse_request(head: bytes) -> ProxyRequest:
    """The request whose head (up to and including the blank line) is `head`."""
    try:
        text = head.decode("ascii")
    except UnicodeDecodeError as exc:
        raise Refused(400, "the request head is not ASCII") from exc
    lines = text.split("\r\n")
    if any(_CONTROL.search(line) for line in lines) or "\t" in lines[0]:
        # A bare CR or LF would end a line for the upstream server that was no line break here:
        # a header (a second Host) or a request it never had checked.
        raise Refused(400, "the request head has a control character (a bare CR or LF, a NUL)")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not _TOKEN.fullmatch(parts[0]) or not parts[2].startswith("HTTP/1."):
        raise Refused(400, "the request line is not `METHOD TARGET HTTP/1.x`")
    method, target, _ = parts
    headers = _headers([line for line in lines[1:] if line])
    if method == "CONNECT":
        host, port = parse_authority(target, default_port=None)
        _check_host_header(headers, host, port)
        return ProxyRequest(host, port, tunnel=True)
    host, port, path = _absolute_target(target)
    _check_host_header(headers, host, port)
    head = _upstream_head(method, path, headers, authority=target[7:].split("/", 1)[0])
    return ProxyRequest(host, port, tunnel=False, upstream_head=head)


def parse_authority(text: str, *, default_port: int | None) -> tuple[Host, int]:
    """`host[:port]` as a host and a port; `Refused` for anything else (userinfo included)."""
    match = _AUTHORITY.fullmatch(text)
    if match is None:
        raise Refused(400, f"{text!r} is not HOST:PORT (no user names, no escapes)")
    port_text = match.group(2)
    if port_text is None and default_port is None:
        raise Refused(400, f"{text!r} names no port")
    port = int(port_text) if port_text is not None else default_port
    assert port is not None
    if not 0 < port < 65536:
        raise Refused(400, f"port {port} is out of range")
    try:
        return parse_host(match.group(1)), port
    except BadHost as exc:
        raise Refused(403, str(exc)) from exc


def _absolute_target(target: str) -> tuple[Host, int, str]:
    if not target[:7].lower() == "http://":
        raise Refused(
            400, "only absolute http:// targets are proxied; use CONNECT for https and others"
        )
    rest = target[7:]
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    host, port = parse_authority(rest[:end], default_port=80)
    path = rest[end:] or "/"
    if not path.startswith("/"):
        path = "/" + path
    return host, port, path.split("#", 1)[0]


def _headers(lines: list[str]) -> list[tuple[str, str]]:
    headers: list[tuple[str, str]] = []
    for line in lines:
        name, colon, value = line.partition(":")
        if not colon or not _TOKEN.fullmatch(name):
            raise Refused(400, "a header line is malformed (or folded)")
        headers.append((name, value.strip()))
    return headers


def _check_host_header(headers: list[tuple[str, str]], host: Host, port: int) -> None:
    values = [value for name, value in headers if name.lower() == "host"]
    if len(values) > 1:
        raise Refused(400, "the request has more than one Host header")
    if not values:
        return
    named, named_port = parse_authority(values[0], default_port=port)
    if named != host or named_port != port:
        raise Refused(403, f"the Host header names {values[0]!r}, not the host the request goes to")


def _upstream_head(
    method: str, path: str, headers: list[tuple[str, str]], *, authority: str
) -> bytes:
    kept = [(n, v) for n, v in headers if n.lower() not in _HOP_BY_HOP]
    if not any(n.lower() == "host" for n, _ in kept):
        kept.insert(0, ("Host", authority.split("?", 1)[0].split("#", 1)[0]))
    # One request per connection: what the client sends next goes to no other host.
    lines = [f"{method} {path} HTTP/1.1", *(f"{n}: {v}" for n, v in kept), "Connection: close"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")
