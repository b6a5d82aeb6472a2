"""The retrieval dev set (benchmarks/data/retrieval) and its deterministic tune/test split."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "retrieval"
SHARED = HERE.parent.parent / "shared" / "data"
TOOL_QUERIES = DATA / "tool_queries.jsonl"
SKILL_QUERIES = DATA / "skill_queries.jsonl"
TEST_PERCENT = 40

Part = Literal["tune", "test"]
PARTS: tuple[Part, ...] = ("tune", "test")


@dataclass(frozen=True)
class Query:
    text: str
    expected: frozenset[str]
    part: Part
    # The round of issue 20 that wrote the query (0 where the file does not say), so each
    # round's queries can be scored apart: later rounds wrote them in other styles.
    written: int = 0


def part_of(text: str) -> Part:
    """`test` for about 40% of queries, by the SHA-256 of the text: stable across runs."""
    bucket = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) % 100
    return "test" if bucket < TEST_PERCENT else "tune"


def read_queries(path: Path, known: Collection[str]) -> list[Query]:
    """The queries of a JSON-lines file; an expected name that is not `known` stops the run."""
    queries = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        record = json.loads(line)
        expected = frozenset(record["expected"])
        unknown = sorted(expected - set(known))
        if unknown:
            raise SystemExit(f"{path}:{number}: unknown names {', '.join(unknown)}")
        text = record["query"]
        queries.append(Query(text, expected, part_of(text), int(record.get("round", 0))))
    return queries
