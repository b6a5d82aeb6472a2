"""Network access by host name: the domain patterns a profile allows and denies, and the verdict.

Patterns are Codex's: `example.com` is that host only, `*.example.com` its subdomains only,
`**.example.com` the host and its subdomains, and `*` (allow-list only) any name. Denied patterns
win over allowed ones. Host names are parsed strictly (ASCII letters, digits, hyphens, dots; one
trailing dot and case ignored): anything else, userinfo or percent signs included, is no host.
An IP literal matches only an entry that is the same literal, never a wildcard; a name that a
resolver could read as a number (`2130706433`, `0x7f.1`) is refused outright. The proxy that
applies the verdict is `_netproxy`'s.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Literal

_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
_NUMERIC_LABEL = re.compile(r"(?:0x[0-9a-f]*|[0-9]+)")
ANY_HOST = "*"

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class BadHost(ValueError):
    """A host or pattern that is not a plain DNS name or IP literal."""


@dataclass(frozen=True)
class Host:
    """A normalised host: lower case, no trailing dot; `ip` set for an IP literal."""

    name: str
    ip: IpAddress | None = None


def parse_host(text: str) -> Host:
    """`text` (a name, an IPv4 literal, an IPv6 literal with or without brackets) normalised."""
    raw = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    try:
        ip = ipaddress.ip_address(raw)
    except ValueError:
        pass
    else:
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        return Host(str(ip), ip)
    name = text.lower().removesuffix(".")
    labels = name.split(".")
    if not name or len(name) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        raise BadHost(f"{text!r} is not a host name")
    if _NUMERIC_LABEL.fullmatch(labels[-1]):
        # getaddrinfo reads `127.1`, `2130706433` or `0x7f.0.0.1` as addresses: never a name.
        raise BadHost(f"{text!r} looks like a numeric address in a form that is not allowed")
    return Host(name)


def normalize_pattern(text: str, *, allow_any: bool) -> str:
    """A domain pattern in canonical form; raises `BadHost` with what is wrong."""
    if text == ANY_HOST:
        if not allow_any:
            raise BadHost("`*` alone may be an allowed domain only, never a denied one")
        return text
    for prefix in ("**.", "*."):
        if text.startswith(prefix):
            rest = parse_host(text.removeprefix(prefix))
            if rest.ip is not None:
                raise BadHost(f"{text!r}: a wildcard cannot stand before an IP address")
            return prefix + rest.name
    if "*" in text:
        raise BadHost(f"{text!r}: a wildcard may only be `*`, `*.domain` or `**.domain`")
    return parse_host(text).name


def check_domain_patterns(patterns: tuple[str, ...], *, allow_any: bool) -> None:
    """Raise `ValueError` naming the first pattern that is not one of Codex's forms."""
    for pattern in patterns:
        try:
            normalize_pattern(pattern, allow_any=allow_any)
        except BadHost as exc:
            raise ValueError(
                f"{exc}; write a host name (example.com), *.example.com, **.example.com"
                " or an IP address"
            ) from exc


def pattern_matches(pattern: str, host: Host) -> bool:
    """Whether canonical `pattern` covers `host`."""
    if host.ip is not None:
        return pattern == host.name
    if pattern == ANY_HOST:
        return True
    if pattern.startswith("**."):
        base = pattern[3:]
        return host.name == base or host.name.endswith("." + base)
    if pattern.startswith("*."):
        return host.name.endswith(pattern[1:])
    return pattern == host.name


Verdict = Literal["allowed", "allowed-exact", "denied", "not-allowed"]


@dataclass(frozen=True)
class DomainPolicy:
    """Allowed and denied patterns (canonical); a host gets in when allowed and not denied."""

    allowed: tuple[str, ...]
    denied: tuple[str, ...] = ()

    def verdict(self, host: Host) -> Verdict:
        """`allowed-exact` when an entry names this very host (it may then be a local address:
        the user named it); `allowed` through a wildcard only."""
        if any(pattern_matches(p, host) for p in self.denied):
            return "denied"
        if host.name in self.allowed:
            return "allowed-exact"
        if any(pattern_matches(p, host) for p in self.allowed):
            return "allowed"
        return "not-allowed"


def intersect_allowed(parent: tuple[str, ...], child: tuple[str, ...]) -> tuple[str, ...]:
    """The child's allowed patterns that the parent's also cover, narrowed to the parent's.

    A child pattern the parent covers whole is kept; where the parent's pattern is the narrower
    one (the child asked for `**.example.com`, the parent allows `api.example.com`), the parent's
    is kept instead. What neither covers is dropped.
    """
    kept: list[str] = []
    for pattern in child:
        if _covers_all(parent, pattern):
            kept.append(pattern)
        else:
            kept.extend(p for p in parent if _covers_all((pattern,), p))
    return tuple(sorted(set(kept)))


def _covers_all(patterns: tuple[str, ...], pattern: str) -> bool:
    """Whether every host `pattern` matches is matched by one of `patterns`."""
    if ANY_HOST in patterns:
        return True
    if pattern == ANY_HOST:
        return False
    if pattern.startswith("**."):
        base = pattern[3:]
        apex_too = base in patterns and _covers_all(patterns, "*." + base)
        return apex_too or any(_under(base, p, "**.") for p in patterns)
    if pattern.startswith("*."):
        base = pattern[2:]
        return any(_under(base, p, "**.") or _under(base, p, "*.") for p in patterns)
    return any(pattern_matches(p, parse_host(pattern)) for p in patterns)


def _under(base: str, pattern: str, prefix: str) -> bool:
    """Whether `pattern` is a `prefix` wildcard over `base` or over a domain above it."""
    if not pattern.startswith(prefix):
        return False
    root = pattern.removeprefix(prefix)
    return base == root or base.endswith("." + root)
