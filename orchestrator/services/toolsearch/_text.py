"""What the index reads of a tool: its fields for BM25, its text for the embedding, and the
one-line summary shown in results.

Identifiers are split the way people read them (`create_pull_request`, `API-post-search` and
`listPullRequests` all become words); the analysis of words (stop words, stemming, spelling)
is `retrieval`'s.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..retrieval import split_identifier

_LINE_CHARS = 120
# A catalog entry is text from an MCP server, which may be hostile: past this many characters a
# description or parameter list would only let a server stuff words to rank for everything.
MAX_FIELD_CHARS = 4000


def tool_document(
    name: str, server: str, description: str, parameters: Mapping[str, str]
) -> dict[str, str]:
    """The BM25 fields of one tool: name and server as words, description, parameter names."""
    return {
        "name": " ".join(split_identifier(name)),
        "server": " ".join(split_identifier(server)),
        "description": description[:MAX_FIELD_CHARS],
        "parameters": " ".join(parameters)[:MAX_FIELD_CHARS],
    }


def embedding_text(name: str, server: str, description: str) -> str:
    """The text embedded for one tool: server and name in words, then the description's first
    line, which is its summary (later lines are usage notes that blur the meaning)."""
    first = description.strip().split("\n", 1)[0].strip()
    return f"{server} {' '.join(split_identifier(name))}: {first[:MAX_FIELD_CHARS]}"


def name_text(name: str, server: str) -> str:
    """A tool's second embedded text: its server and name alone, which a terse request
    ("merge the PR") matches better than the name diluted by a long description."""
    return f"{server} {' '.join(split_identifier(name))}"


def parameters_text(name: str, parameters: Mapping[str, str]) -> str:
    """A tool's third embedded text: its name, then each parameter with its description,
    for requests phrased by what they pass ("log 3h on DEV-12": a duration and an issue)."""
    described = "; ".join(f"{key}: {text}" for key, text in parameters.items())
    return f"{' '.join(split_identifier(name))}: {described[:MAX_FIELD_CHARS]}"


def one_line(text: str, limit: int = _LINE_CHARS) -> str:
    """The first sentence of `text` on one line, cut to `limit` characters."""
    first = " ".join(text.strip().split("\n", 1)[0].split())
    end = first.find(". ")
    first = first if end < 0 else first[: end + 1]
    return first if len(first) <= limit else first[: limit - 3].rstrip() + "..."
