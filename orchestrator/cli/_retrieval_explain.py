"""How `corral tools search --explain` and `corral skills match --explain` show why a result
ranked where it did: the query as the rankers read it, each ranker's rank and share of the fused
score, each feature's part of the second stage's score where there is one, and the
BM25 score of each field (query words and their synonyms)."""

from __future__ import annotations

from typing import Any

from ..services.retrieval import Explanation, Query


def query_lines(query: Query, embedding: str = "") -> list[str]:
    """What the rankers searched for: the corrected words and the synonyms added, and what
    embedded the request (`embedding`, where known)."""
    lines = [f"query words: {query.words.strip()}"]
    if query.translations:
        read = ", ".join(f"{word} -> {gloss}" for word, gloss in query.translations.items())
        lines.append(f"translated:  {read}")
    if query.corrections:
        fixed = ", ".join(f"{typed} -> {meant}" for typed, meant in query.corrections.items())
        lines.append(f"spelling:    {fixed}")
    if query.entities:
        read = "; ".join(f"{key} -> {' '.join(kind)}" for key, kind in query.entities.items())
        lines.append(f"recognized:  {read}")
    if query.expanded:
        read = "; ".join(f"{key} -> {', '.join(terms)}" for key, terms in query.expanded.items())
        lines.append(f"synonyms:    {read}")
    if query.expansion:
        lines.append(f"             searched as {' '.join(query.expansion)} (stems)")
    if embedding:
        lines.append(f"embedded by: {embedding}")
    return lines


def explanation_lines(why: Explanation) -> list[str]:
    """Two or three lines for one result: the fusion, the second stage's features (when it
    ranked), then the BM25 fields and the cosine similarity."""
    fused = why.fused
    parts = " + ".join(
        f"{ranker} #{fused.ranks[ranker]} ({share:.4f})" for ranker, share in fused.parts.items()
    )
    missing = sorted({"bm25", "embedding"} - fused.parts.keys())
    absent = "".join(f"; {ranker}: not in its top list" for ranker in missing)
    fields = ", ".join(
        f"{name} {score:.2f}" for name, score in sorted(why.fields.items(), key=lambda kv: -kv[1])
    )
    if why.rerank:
        features = " + ".join(
            f"{name} {part:.2f}" for name, part in sorted(why.rerank.items(), key=lambda kv: -kv[1])
        )
        head = [
            f"first stage: {parts or 'nothing'}{absent}",
            f"score {fused.score:.4f} = {features}",
        ]
    else:
        head = [f"fused {fused.score:.4f} = {parts or 'nothing'}{absent}"]
    return [
        *head,
        f"bm25 by field: {fields or 'no word matched'}; embedding cosine {why.similarity:.3f}",
    ]


def explanation_json(query: Query, why: Explanation) -> dict[str, Any]:
    """The same as JSON, for `--json --explain`."""
    return {
        "rankers": {
            ranker: {"rank": why.fused.ranks[ranker], "share": round(share, 6)}
            for ranker, share in why.fused.parts.items()
        },
        "bm25_fields": {name: round(score, 4) for name, score in why.fields.items()},
        "embedding_cosine": round(why.similarity, 4),
        "embedding_model": why.embedding,
        "rerank": {name: round(part, 6) for name, part in why.rerank.items()},
        "query_words": query.words.strip(),
        "corrections": dict(query.corrections),
        "translations": dict(query.translations),
        "synonyms": list(query.expansion),
        "expanded": {key: list(terms) for key, terms in query.expanded.items()},
        "recognized": {key: " ".join(kind) for key, kind in query.entities.items()},
        "embedded_text": query.embedded,
    }
