"""tool_search quality and speed: recall@1 and recall@5 of BM25, embeddings and their fusion.

The index holds the real tools of 15 MCP servers (../shared/data/tools) plus those of
`@modelcontextprotocol/server-everything` (benchmarks/data/tools), topped up to 1,000 with
distractors made by recombining real tools across servers. The queries, written for this
benchmark, are in benchmarks/data/tool_queries.jsonl. Run from the repo root:

    .venv/bin/python -m benchmarks.tool_search
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from corral.orchestrator.services import retrieval_embedder
from corral.orchestrator.services.toolsearch import (
    IndexedTool,
    Ranker,
    ToolIndex,
    exposed_tool_name,
    load_catalog,
)

HERE = Path(__file__).resolve().parent
SHARED_TOOLS = HERE.parent.parent / "shared" / "data" / "tools"
OWN_TOOLS = HERE / "data" / "tools"
QUERIES = HERE / "data" / "tool_queries.jsonl"
TARGET_TOOLS = 1000
DISTRACTORS_PER_SERVER = 24
SEED = 6
RANKERS: tuple[Ranker, ...] = ("bm25", "embedding", "fused")


@dataclass(frozen=True)
class Query:
    text: str
    expected: frozenset[str]


@dataclass(frozen=True)
class Figures:
    ranker: Ranker
    recall_at_1: float
    recall_at_5: float
    p50_ms: float
    p95_ms: float


def load_queries(path: Path, known: set[str]) -> list[Query]:
    queries = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        raw = json.loads(line)
        expected = frozenset(raw["expected"])
        unknown = expected - known
        if unknown:
            raise SystemExit(f"{path}: {raw['query']!r} expects unknown tools {sorted(unknown)}")
        queries.append(Query(raw["query"], expected))
    return queries


def distractors(real: Sequence[IndexedTool], count: int) -> list[IndexedTool]:
    """Made-up tools: the verb and first sentence of one real tool joined to the object and
    first sentence of another from a different server, under made-up server names."""
    rng = random.Random(SEED)
    made: list[IndexedTool] = []
    taken = {t.name for t in real}
    while len(made) < count:
        a, b = rng.sample(list(real), 2)
        words_a, words_b = _words(a.tool), _words(b.tool)
        if a.server == b.server or len(words_a) < 2 or len(words_b) < 2:
            continue
        server = f"mixed{len(made) // DISTRACTORS_PER_SERVER:02d}"
        tool = "_".join([words_a[0], *words_b[1:]])
        name = exposed_tool_name(server, tool, taken)
        taken.add(name)
        description = f"{_first_sentence(a.description)} {_first_sentence(b.description)}"
        made.append(IndexedTool(name, server, tool, description, {**a.parameters, **b.parameters}))
    return made


def _words(name: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", name.lower())


def _first_sentence(text: str) -> str:
    line = " ".join(text.split())
    end = line.find(". ")
    return line if end < 0 else line[: end + 1]


def measure(index: ToolIndex, queries: Sequence[Query], ranker: Ranker, repeat: int) -> Figures:
    at_1 = at_5 = 0
    latencies: list[float] = []
    for query in queries:
        names = [hit.name for hit in index.search(query.text, 5, ranker=ranker)]
        at_1 += bool(query.expected & set(names[:1]))
        at_5 += bool(query.expected & set(names))
    # Round by round over every query, so no search repeats the one before it: the index keeps
    # the last query's embedding, and a repeat would time that memo, not a search.
    for _ in range(repeat):
        for query in queries:
            started = time.perf_counter()
            index.search(query.text, 8, ranker=ranker)
            latencies.append((time.perf_counter() - started) * 1000)
    cuts = statistics.quantiles(latencies, n=100)
    n = len(queries)
    return Figures(ranker, at_1 / n, at_5 / n, cuts[49], cuts[94])


def timed(action: Callable[[], object], runs: int) -> float:
    """The median wall time of `runs` calls, in seconds."""
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def table(title: str, figures: Sequence[Figures]) -> str:
    lines = [
        f"**{title}**",
        "",
        "| ranker | recall@1 | recall@5 | search p50 | search p95 |",
        "|---|---|---|---|---|",
    ]
    for f in figures:
        lines.append(
            f"| {f.ranker} | {f.recall_at_1:.1%} | {f.recall_at_5:.1%} "
            f"| {f.p50_ms:.2f} ms | {f.p95_ms:.2f} ms |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed searches per query")
    args = parser.parse_args()
    if not SHARED_TOOLS.is_dir():
        raise SystemExit(f"the shared tool catalogs are missing: {SHARED_TOOLS}")
    real = load_catalog(SHARED_TOOLS) + load_catalog(OWN_TOOLS)
    extra = distractors(real, max(TARGET_TOOLS - len(real), 0))
    everything = real + extra
    queries = load_queries(QUERIES, {t.name for t in real})

    embedder = retrieval_embedder()
    load_s = timed(lambda: embedder.embed(["warm up"]), 1)
    build_s = timed(lambda: ToolIndex(everything, embedder), 3)
    servers = len({t.server for t in real})
    print(
        f"{len(everything)} tools: {len(real)} real from {servers} MCP servers "
        f"+ {len(extra)} distractors recombined from real tools across servers; "
        f"{len(queries)} queries. recall@k: a correct tool is among the first k."
    )
    print(f"model load {load_s * 1000:.0f} ms; index build {build_s * 1000:.0f} ms (median of 3)")
    print()
    for title, tools in ((f"{len(everything)} tools", everything), (f"{len(real)} real", real)):
        index = ToolIndex(tools, embedder)
        print(table(title, [measure(index, queries, r, args.repeat) for r in RANKERS]))
        print()


if __name__ == "__main__":
    main()
