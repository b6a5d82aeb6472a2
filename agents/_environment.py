"""The `<environment_context>` fragment: where the agent runs, when, and who its children are.

`EnvironmentContext` is plain data that renders the full fragment for the first turn and a diff
for later ones, so the prompt prefix stays byte-stable. Only `capture_environment` looks at the
machine (shell and time zone); the caller supplies the clock reading.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ._fragments import ENVIRONMENT_CONTEXT

DEFAULT_SHELL = "bash"
DEFAULT_TIMEZONE = "Etc/UTC"
_ZONE_NAME = re.compile(r"[A-Za-z0-9_+-]+(?:/[A-Za-z0-9_+-]+)*")


@dataclass(frozen=True)
class EnvironmentContext:
    """What the model is told about its surroundings; equal values render identical text."""

    cwd: Path
    shell: str
    current_date: str
    timezone: str
    network: bool | None = None
    allowed_domains: tuple[str, ...] | None = None
    """With `network` on: the domain policy the proxy enforces (None: no list)."""
    denied_domains: tuple[str, ...] = ()
    subagents: tuple[tuple[str, str], ...] = ()
    web_search: str | None = None
    """Set when web search is on but cannot be offered (the note says why)."""

    def render(self) -> str:
        """The full fragment, as sent in the initial context."""
        lines = [f"<cwd>{self.cwd}</cwd>", *self._common_lines()]
        if self.network is not None:
            lines.extend(self._network_lines())
        if self.subagents:
            lines.append("<subagents>")
            lines.extend(f"  - {agent}: {nickname}" for agent, nickname in self.subagents)
            lines.append("</subagents>")
        if self.web_search is not None:
            lines.append(f"<web_search>{self.web_search}</web_search>")
        return _wrap(lines)

    def render_diff(self, previous: EnvironmentContext) -> str | None:
        """What changed since `previous`, or None when the model needs no update.

        A changed shell alone is no reason to resend, and subagents are only listed in full.
        """
        if self._comparable() == previous._comparable():
            return None
        lines = [f"<cwd>{self.cwd}</cwd>"] if self.cwd != previous.cwd else []
        lines.extend(self._common_lines())
        if self._network_facts() != previous._network_facts() and self.network is not None:
            lines.extend(self._network_lines())
        return _wrap(lines)

    def _common_lines(self) -> list[str]:
        return [
            f"<shell>{self.shell}</shell>",
            f"<current_date>{self.current_date}</current_date>",
            f"<timezone>{self.timezone}</timezone>",
        ]

    def _comparable(self) -> tuple[object, ...]:
        return (self.cwd, self.current_date, self.timezone, *self._network_facts())

    def _network_facts(self) -> tuple[object, ...]:
        return (self.network, self.allowed_domains, self.denied_domains)

    def _network_lines(self) -> list[str]:
        """Codex's layout: a `<network>` block listing the domains when there is a policy."""
        enabled = str(bool(self.network)).lower()
        if not self.network or (self.allowed_domains is None and not self.denied_domains):
            return [f'<network enabled="{enabled}"/>']
        allowed = [f"  <allowed>{d}</allowed>" for d in self.allowed_domains or ()]
        denied = [f"  <denied>{d}</denied>" for d in self.denied_domains]
        return [f'<network enabled="{enabled}">', *allowed, *denied, "</network>"]


def _wrap(lines: list[str]) -> str:
    body = "".join(f"  {line}\n" for line in lines)
    return ENVIRONMENT_CONTEXT.render(f"\n{body}")


def capture_environment(
    cwd: Path,
    *,
    now: datetime,
    network: bool | None,
    subagents: tuple[tuple[str, str], ...] = (),
    allowed_domains: tuple[str, ...] | None = None,
    denied_domains: tuple[str, ...] = (),
    web_search: str | None = None,
) -> EnvironmentContext:
    """Read the shell and local time zone of this machine; `now` gives the date.

    An aware `now` is converted to the detected zone; a naive one is taken as local time.
    """
    zone = detect_timezone(os.environ)
    if now.tzinfo is not None:
        now = now.astimezone(_zone_info(zone))
    return EnvironmentContext(
        cwd=cwd,
        shell=detect_shell(os.environ),
        current_date=now.date().isoformat(),
        timezone=zone,
        network=network,
        allowed_domains=allowed_domains,
        denied_domains=denied_domains,
        subagents=tuple(subagents),
        web_search=web_search,
    )


def detect_shell(environ: Mapping[str, str]) -> str:
    """The basename of `$SHELL`, or bash when it is unset."""
    return Path(environ.get("SHELL", "")).name or DEFAULT_SHELL


def detect_timezone(environ: Mapping[str, str], *, etc: Path = Path("/etc")) -> str:
    """The IANA name of the local zone: `$TZ`, `/etc/timezone`, the `/etc/localtime` link."""
    candidates = (
        environ.get("TZ", ""),
        _read_first_line(etc / "timezone"),
        _link_target(etc / "localtime"),
    )
    for candidate in candidates:
        zone = _zone_name(candidate)
        if zone is not None:
            return zone
    return DEFAULT_TIMEZONE


def _zone_name(raw: str) -> str | None:
    """An IANA name from a `TZ`-style value or a zoneinfo path; None when it names no zone."""
    name = raw.strip().removeprefix(":")
    if "zoneinfo/" in name:
        name = name.rsplit("zoneinfo/", 1)[1]
    if not _ZONE_NAME.fullmatch(name):
        return None
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None
    return name


def _zone_info(name: str) -> tzinfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return UTC


def _read_first_line(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return text.splitlines()[0] if text else ""


def _link_target(path: Path) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return ""
