"""What a fan-out produced: one outcome per item, the run's totals, and the results file.

An item's outcome is read back from the journal, so a run and its resumption report the same
way. Results are written as JSON lines in item order, to a temporary file first and then moved
into place, so a reader never sees half a results file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from corral.agents import ItemRecord, Usage, format_cost
from corral.tools import OperationFailed

DONE = "done"
FAILED = "failed"
RUNNING = "running"
PENDING = "pending"
FINAL_STATUSES = frozenset({DONE, FAILED})


def usage_json(usage: Usage) -> dict[str, int]:
    """The token counts a results line shows."""
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cached_tokens": usage.cached_input_tokens,
    }


@dataclass(frozen=True)
class ItemOutcome:
    """What became of one item."""

    index: int
    status: str
    result: Any
    error: str | None
    usage: dict[str, int]
    cost_usd: float
    agent_id: str | None

    @classmethod
    def from_record(cls, record: ItemRecord) -> ItemOutcome:
        return cls(
            index=record.index,
            status=record.status,
            result=record.result,
            error=record.error,
            usage=dict(record.usage),
            cost_usd=record.cost_usd,
            agent_id=record.agent_id,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "status": self.status,
            "result": self.result,
            "error": self.error,
            "usage": self.usage,
            "cost_usd": self.cost_usd,
            "agent_id": self.agent_id,
        }


@dataclass(frozen=True)
class FanoutOutcome:
    """A finished fan-out: every item's outcome in order, and where the results go (a file, or
    the caller's stdout)."""

    run_id: str
    items: tuple[ItemOutcome, ...]
    journal: str
    """The journal the run was written to: its SQLite file, or its PostgreSQL URL with the
    password shown as `***` (`Store.journal`)."""
    out: Path | None = None
    to_stdout: bool = False

    @property
    def done(self) -> int:
        return sum(1 for item in self.items if item.status == DONE)

    @property
    def failed(self) -> int:
        return len(self.items) - self.done

    @property
    def ok(self) -> bool:
        return self.failed == 0

    def totals(self) -> dict[str, Any]:
        """Counts, tokens and cost over every item: the run's journaled summary."""
        tokens = {"input_tokens": 0, "output_tokens": 0, "cached_tokens": 0}
        for item in self.items:
            for key in tokens:
                tokens[key] += item.usage.get(key, 0)
        cost = sum(item.cost_usd for item in self.items)
        return (
            {"items": len(self.items), "done": self.done, "failed": self.failed}
            | tokens
            | {"cost_usd": cost}
        )

    def summary_line(self) -> str:
        t = self.totals()
        return (
            f"{t['done']} done, {t['failed']} failed of {t['items']} items; "
            f"{t['input_tokens']:,} input tokens ({t['cached_tokens']:,} cached), "
            f"{t['output_tokens']:,} output tokens; {format_cost(t['cost_usd'])}"
        )

    def lines(self) -> list[str]:
        """The results, one JSON line per item, in item order."""
        return [json.dumps(item.to_json(), ensure_ascii=False) for item in self.items]


def write_results(lines: Sequence[str], path: Path, run_id: str = "") -> None:
    """Write `lines` to `path` whole or not at all (blocking; run it in a thread). A path that
    cannot be written is an `OperationFailed` saying the results are still in the journal."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.partial")
        partial.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
        os.replace(partial, path)
    except OSError as exc:
        kept = f"`corral export {run_id}` prints them" if run_id else "`corral export RUN`"
        raise OperationFailed(
            f"cannot write the results to {path}: {exc.strerror or exc}; every result is kept "
            f"in the journal ({kept})"
        ) from exc
