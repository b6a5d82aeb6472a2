"""Words for lexical ranking: identifiers split, lower-cased, stop words dropped, stemmed, and
query words that are not in the index's vocabulary corrected to a close one that is.

The correction is a symmetric-delete lookup (SymSpell's idea at distance one): every word of
the vocabulary is filed under itself and each one-letter deletion, so a query word with one
letter wrong, missing, extra or two letters swapped finds its word in a few dictionary reads.
Everything is local: the stemmer is PyStemmer's Snowball English, compiled into the wheel.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Container, Iterable, Sequence
from typing import Any

import Stemmer  # type: ignore[import-not-found]  # a C extension without stubs

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[^\W_]+")
# Words shorter than this are never corrected: at three letters a one-letter edit is another
# common word ("pod" -> "pad"), and short words are usually abbreviations spelled on purpose.
MIN_CORRECTABLE = 4
SUBSTITUTION_MIN = 6
# Nor longer than this: a word's deletes cost the square of its length, and a hostile tool
# description or query can hold one word of megabytes. No real word this long needs a guess.
MAX_CORRECTABLE = 30

# Function words only: "all", "up", "down", "on" and "off" stay, since tools differ by them
# ("mark all notifications read", "mouse up", "toggle logging on or off").
_STOPWORD_TEXT = """
    a an and are as at be been being but by can could did do does doing for from had has have
    having he her here hers him his how i if in into is it its itself just me my myself no nor
    not of or our ours she should so some such than that the their theirs them then there these
    they this those through to too very was we were what when where which while who whom why
    will with would you your yours please want need like use using
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_local = threading.local()


def split_identifier(text: str) -> list[str]:
    """Lower-cased words of `text`, with camelCase, `_` and `-` treated as word breaks."""
    return _WORD.findall(_CAMEL_BOUNDARY.sub(" ", text).lower())


def content_words(text: str) -> list[str]:
    """The words of `text` that carry meaning: split, lower-cased, no stop words or letters."""
    return [w for w in split_identifier(text) if w not in STOPWORDS and len(w) > 1]


def stem_words(words: Sequence[str]) -> list[str]:
    """Snowball English stems; a PyStemmer object is not thread-safe, so each thread has one."""
    stemmer: Any = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = Stemmer.Stemmer("english")
    return list(stemmer.stemWords(list(words)))


def analyze(text: str) -> list[str]:
    """BM25 tokens of `text`: content words, stemmed."""
    return stem_words(content_words(text))


class Speller:
    """Corrects a query word to the most frequent vocabulary word within one edit of it."""

    def __init__(self, documents: Iterable[str], dictionary: Container[str] = frozenset()) -> None:
        self._dictionary = dictionary
        counts: Counter[str] = Counter()
        for text in documents:
            counts.update(set(content_words(text)))
        self._counts = counts
        self._stems = frozenset(stem_words(list(counts)))
        self._by_delete: dict[str, list[str]] = {}
        for word in sorted(counts):
            if MIN_CORRECTABLE - 1 <= len(word) <= MAX_CORRECTABLE + 1:
                for key in {word, *_deletes(word)}:
                    self._by_delete.setdefault(key, []).append(word)

    def __contains__(self, word: str) -> bool:
        return word in self._counts

    def correct(self, word: str) -> str:
        """`word` itself when known, short, a real word, or without a close match; else the
        closest-length, most frequent vocabulary word one edit away that starts with the same
        letter (typos rarely hit the first letter, and allowing it turns "grep" into "repo")."""
        if (
            word in self._counts
            or not MIN_CORRECTABLE <= len(word) <= MAX_CORRECTABLE
            or not word.isalpha()
            or word in self._dictionary
            or stem_words([word])[0] in self._stems
        ):
            return word
        keys = (word, *_deletes(word))
        candidates = {
            c
            for key in keys
            for c in self._by_delete.get(key, ())
            if c[0] == word[0] and _plausible(word, c)
        }
        if not candidates:
            return word
        return min(candidates, key=lambda c: (abs(len(c) - len(word)), -self._counts[c], c))

    def correct_text(self, text: str) -> tuple[str, dict[str, str]]:
        """`text` with each unknown word corrected, and what was changed."""
        changed: dict[str, str] = {}

        def fix(match: re.Match[str]) -> str:
            word = match.group(0).lower()
            fixed = word if word in STOPWORDS else self.correct(word)
            if fixed == word:
                return match.group(0)
            changed[word] = fixed
            return fixed

        return _WORD.sub(fix, text), changed


def _plausible(word: str, candidate: str) -> bool:
    """One letter swapped for another is only trusted in longer words: in short ones it
    turns real words the index lacks into unrelated ones ("cash" into "case")."""
    if len(word) != len(candidate) or sorted(word) == sorted(candidate):
        return True
    return len(word) >= SUBSTITUTION_MIN


def _deletes(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}
