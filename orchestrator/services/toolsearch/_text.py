"""Turning tool metadata and queries into BM25 tokens and embedding texts.

Identifiers are split the way people read them (`create_pull_request`, `API-post-search` and
`listPullRequests` all become words), words are lower-cased, common English words are dropped
and plurals are folded with a light suffix stemmer. Everything here is local: no word list or
stemmer is downloaded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[a-z0-9]+")
_LINE_CHARS = 120

# Function words only: "all", "up", "down", "on" and "off" stay, since tools differ by them
# ("mark all notifications read", "mouse up", "toggle logging on or off").
_STOPWORD_TEXT = """
    a an and are as at be been being but by can could did do does doing for from had has have
    having he her here hers him his how i if in into is it its itself just me my myself no nor
    not of or our ours she should so some such than that the their theirs them then there these
    they this those through to too very was we were what when where which while who whom why
    will with would you your yours
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def split_identifier(text: str) -> list[str]:
    """Lower-cased words of `text`, with camelCase, `_` and `-` treated as word breaks."""
    return _WORD.findall(_CAMEL_BOUNDARY.sub(" ", text).lower())


def stem(word: str) -> str:
    """Fold a plural onto its singular (Harman's S-stemmer, plus -ches/-xes): branches -> branch."""
    if len(word) <= 3 or not word.endswith("s"):
        return word
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    if word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if word.endswith(("us", "ss")):
        return word
    return word[:-1]


def tokenize(text: str) -> list[str]:
    """BM25 tokens of `text`: split, lower-cased, stopwords dropped, plurals folded."""
    return [stem(w) for w in split_identifier(text) if w not in STOPWORDS and len(w) > 1]


def tool_tokens(name: str, server: str, description: str, parameters: Iterable[str]) -> list[str]:
    """The BM25 document of one tool: server, name (counted twice), description, parameters."""
    name_tokens = tokenize(name)
    # A tool's name is its most precise summary, so its words weigh double.
    return [
        *tokenize(server),
        *name_tokens,
        *name_tokens,
        *tokenize(description),
        *(token for parameter in parameters for token in tokenize(parameter)),
    ]


def embedding_text(name: str, description: str) -> str:
    """The text embedded for one tool: its name in words, then its description."""
    return f"{' '.join(split_identifier(name))}: {description.strip()}"


def one_line(text: str, limit: int = _LINE_CHARS) -> str:
    """The first sentence of `text` on one line, cut to `limit` characters."""
    first = " ".join(text.strip().split("\n", 1)[0].split())
    end = first.find(". ")
    first = first if end < 0 else first[: end + 1]
    return first if len(first) <= limit else first[: limit - 3].rstrip() + "..."
