"""A scripted model that learns one project fact: agents read a file, extraction answers it.

Requests are told apart by `metadata.corral_purpose` (memory's extraction and consolidation)
and by whether the agent has read its file yet.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from corral.orchestrator.memory import CONSOLIDATION, EXTRACTION, PURPOSE_KEY

from .._scripted import call, outputs, texts

FACT = "The tests of this project run with `make check`, never with bare pytest."
MEMORY_TAG = "<memory_context>"


def purpose(request: dict[str, Any]) -> str | None:
    value = (request.get("metadata") or {}).get(PURPOSE_KEY)
    return value if isinstance(value, str) else None


def memory_fragments(request: dict[str, Any]) -> list[str]:
    """The memory fragments of a logged request's input, in order."""
    normalised = request.get("normalised", request)
    return [text for _, text in texts(normalised) if text.startswith(MEMORY_TAG)]


@dataclass
class LearnsAFact:
    """Agents read `Makefile` then finish; extraction remembers `facts`."""

    facts: tuple[str, ...] = (FACT,)
    insight: str | None = None
    """Consolidation's one insight, citing every memory it was sent (none when unset)."""
    extractions: list[dict[str, Any]] = field(default_factory=list)

    def _insights(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        if self.insight is None:
            return []
        sent = "".join(text for _, text in texts(request))
        cited = [json.loads(line)["id"] for line in sent.splitlines() if line.startswith("{")]
        return [{"text": self.insight, "sources": cited}]

    def __call__(self, request: dict[str, Any]) -> Any:
        kind = purpose(request)
        if kind == EXTRACTION:
            self.extractions.append(request)
            found = [{"text": fact, "files": ["Makefile"]} for fact in self.facts]
            return json.dumps({"memories": found})
        if kind == CONSOLIDATION:
            return json.dumps({"insights": self._insights(request)})
        if not outputs(request):
            return [call("read-1", "read_file", {"path": "Makefile"})]
        return "done"
