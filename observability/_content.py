"""Message and tool content on spans: off unless asked for, and always through redaction.

`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` (`true`, `span_only`, `span_and_event`)
turns capture on. Whatever the setting, a `Redactor` replaces API keys, `Authorization` values,
the process's secret variables and configured patterns before any text reaches a span.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_ON = frozenset({"true", "1", "yes", "span_only", "span_and_event"})
REDACTED = "[REDACTED]"
DEFAULT_PATTERNS = (
    r"sk-[A-Za-z0-9_\-]{12,}",
    r"(?i)(?<=authorization)(\s*[:=]\s*)(bearer\s+)?[^\s\"',}]+",
    r"(?i)(?<=bearer )[A-Za-z0-9._~+/\-]{8,}=*",
)
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)$")
_MIN_SECRET = 8


def capture_enabled(env: Mapping[str, str]) -> bool:
    return env.get(CAPTURE_ENV, "").strip().lower() in _ON


class Redactor:
    """Replaces every secret value and secret-looking match in a text with `[REDACTED]`."""

    def __init__(self, secrets: Iterable[str] = (), patterns: Iterable[str] = ()) -> None:
        values = sorted({s for s in secrets if len(s) >= _MIN_SECRET}, key=len, reverse=True)
        self._values = values
        self._patterns = [re.compile(p) for p in (*DEFAULT_PATTERNS, *patterns)]

    @classmethod
    def from_env(cls, env: Mapping[str, str], patterns: Iterable[str] = ()) -> Redactor:
        """Also redact the value of every variable named like a key, token or password."""
        secrets = [v for k, v in env.items() if _SECRET_NAME.search(k.upper())]
        return cls(secrets, patterns)

    def __call__(self, text: str) -> str:
        for value in self._values:
            text = text.replace(value, REDACTED)
        for pattern in self._patterns:
            text = pattern.sub(_keep_separator, text)
        return text


def _keep_separator(match: re.Match[str]) -> str:
    separator = match.group(1) if match.re.groups and match.group(1) else ""
    return separator + REDACTED
