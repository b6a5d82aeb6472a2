"""The retrieval dev set's queries say which round wrote them, so the benchmark can score each
round apart: rounds 6 and 9 were written like held-out sets, by other hands than the rest."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from benchmarks._retrieval_data import SKILL_QUERIES, TOOL_QUERIES, read_queries


def test_every_tool_query_names_the_round_that_wrote_it() -> None:
    lines = TOOL_QUERIES.read_text(encoding="utf-8").splitlines()
    rounds = Counter(json.loads(line)["round"] for line in lines)
    assert rounds == {4: 536, 5: 230, 6: 182, 9: 257, 10: 380, 11: 220, 13: 199, 15: 197}


def test_the_skill_queries_of_rounds_9_to_15_say_so_and_the_older_ones_have_no_round() -> None:
    lines = SKILL_QUERIES.read_text(encoding="utf-8").splitlines()
    rounds = Counter(json.loads(line).get("round", 0) for line in lines)
    assert rounds == {0: 381, 9: 230, 10: 220, 11: 300, 13: 300, 15: 300}


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
    for path in (TOOL_QUERIES, SKILL_QUERIES):
        lines = path.read_text(encoding="utf-8").splitlines()
        texts = [json.loads(line)["query"].lower() for line in lines]
        assert len(texts) == len(set(texts)), path.name
