"""Skill-match accuracy and speed over real SKILL.md files, for BM25, embeddings and both fused.

Each query in `benchmarks/data/skill_queries.jsonl` is a task description with the skill
name(s) that should be found for it; a query counts at top-k when any of them is among the k
best matches. Run from the repo root (the data sits in `shared/`, beside the repo):

    .venv/bin/python -m benchmarks.skill_match [--misses]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from corral.orchestrator.services import retrieval_embedder
from corral.orchestrator.services.skills import (
    MatchMethod,
    SkillCatalog,
    SkillMatcher,
    SkillRoot,
    load_skills,
)

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "skills"
QUERIES = Path(__file__).resolve().parent / "data" / "skill_queries.jsonl"
METHODS: tuple[MatchMethod, ...] = ("bm25", "embedding", "fused")
REPEATS = 5
T = TypeVar("T")


@dataclass(frozen=True)
class Query:
    text: str
    expected: frozenset[str]


@dataclass(frozen=True)
class MethodResult:
    method: MatchMethod
    top1: float
    top3: float
    median_ms: float
    p95_ms: float
    misses: tuple[str, ...]


def read_queries(path: Path, catalog: SkillCatalog) -> list[Query]:
    queries = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            record = json.loads(line)
            query = Query(record["query"], frozenset(record["expected"]))
            unknown = sorted(name for name in query.expected if catalog.get(name) is None)
            if unknown:
                sys.exit(f"{path}:{number}: no skill named {', '.join(unknown)}")
            queries.append(query)
    return queries


def timed(fn: Callable[[], T], repeats: int = REPEATS) -> tuple[T, float]:
    """The result of `fn` and its median wall time in milliseconds over `repeats` calls."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - start) * 1000)
    assert result is not None
    return result, statistics.median(times)


def evaluate(matcher: SkillMatcher, queries: Sequence[Query], method: MatchMethod) -> MethodResult:
    hits1 = hits3 = 0
    latencies, misses = [], []
    for query in queries:
        start = time.perf_counter()
        names = [m.skill.name for m in matcher.match(query.text, 3, method=method)]
        latencies.append((time.perf_counter() - start) * 1000)
        hits1 += bool(names[:1] and names[0] in query.expected)
        found = bool(query.expected.intersection(names))
        hits3 += found
        if not found:
            misses.append(f"{query.text!r}: expected {sorted(query.expected)}, got {names}")
    latencies.sort()
    p95 = latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))]
    return MethodResult(
        method,
        top1=hits1 / len(queries),
        top3=hits3 / len(queries),
        median_ms=statistics.median(latencies),
        p95_ms=p95,
        misses=tuple(misses),
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="folder of skills")
    parser.add_argument("--queries", type=Path, default=QUERIES, help="JSON-lines queries")
    parser.add_argument("--misses", action="store_true", help="list the top-3 misses")
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        sys.exit(f"skills data folder {args.data} is missing; it ships in shared/data/skills")
    catalog, load_ms = timed(lambda: load_skills([SkillRoot(args.data, "extra")]))
    queries = read_queries(args.queries, catalog)
    embedder = retrieval_embedder()
    _, model_ms = timed(lambda: embedder.embed(["warm up"]), repeats=1)
    matcher, index_ms = timed(lambda: SkillMatcher(catalog, embedder))
    results = [evaluate(matcher, queries, method) for method in METHODS]
    print(report(catalog, queries, results, load_ms=load_ms, model_ms=model_ms, index_ms=index_ms))
    if args.misses:
        for result in results:
            print(f"\n{result.method} misses at top 3:", *result.misses, sep="\n- ")
    return 0


def report(
    catalog: SkillCatalog,
    queries: Sequence[Query],
    results: Sequence[MethodResult],
    *,
    load_ms: float,
    model_ms: float,
    index_ms: float,
) -> str:
    lines = [
        f"{len(catalog)} skills ({len(catalog.warnings)} skipped), {len(queries)} queries",
        f"load {load_ms:.0f} ms (median of {REPEATS}); embedding model load {model_ms:.0f} ms; "
        f"index {index_ms:.0f} ms (median of {REPEATS})",
        "",
        "| method | top-1 | top-3 | match median (ms) | match p95 (ms) |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r.method} | {r.top1:.1%} | {r.top3:.1%} | {r.median_ms:.2f} | {r.p95_ms:.2f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
