"""The retrieval dev set's tool queries say which round wrote them, so the benchmark can score
each round's queries apart (round 6's indirect ones are the honest held-out estimate)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from benchmarks._retrieval_data import TOOL_QUERIES, read_queries


def test_every_tool_query_names_the_round_that_wrote_it() -> None:
    lines = TOOL_QUERIES.read_text(encoding="utf-8").splitlines()
    rounds = Counter(json.loads(line)["round"] for line in lines)
    assert rounds == {4: 536, 5: 230, 6: 182}


def test_read_queries_keeps_each_querys_round_and_its_hash_part(tmp_path: Path) -> None:
    path = tmp_path / "queries.jsonl"
    records = [
        {"query": "merge the pull request", "expected": ["a"], "round": 6},
        {"query": "list my open tickets", "expected": ["b"]},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    queries = read_queries(path, {"a", "b"})
    assert [q.written for q in queries] == [6, 0]
    assert all(q.part in ("tune", "test") for q in queries)


def test_the_dev_set_has_no_query_twice() -> None:
    lines = TOOL_QUERIES.read_text(encoding="utf-8").splitlines()
    texts = [json.loads(line)["query"].lower() for line in lines]
    assert len(texts) == len(set(texts))
