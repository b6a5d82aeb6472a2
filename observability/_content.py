"""Message and tool content on spans: off unless asked for, and always through redaction.

`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` (`true`, `span_only`, `span_and_event`)
turns capture on. Whatever the setting, a `Redactor` replaces API keys, `Authorization` values,
the process's secret variables and configured patterns before any text reaches a span (the
redactor is `corral.tools`', shared with the memory store).
"""

from __future__ import annotations

from collections.abc import Mapping

from corral.tools import REDACTED as REDACTED
from corral.tools import Redactor as Redactor

CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_ON = frozenset({"true", "1", "yes", "span_only", "span_and_event"})


def capture_enabled(env: Mapping[str, str]) -> bool:
    return env.get(CAPTURE_ENV, "").strip().lower() in _ON
