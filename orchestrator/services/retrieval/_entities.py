"""What kind of thing a request names, read from the shape of its identifiers.

People name the thing they mean by its identifier more often than by its kind: "API-88 -> done
pls" is about a Jira issue, "who originates 104.16.0.0/13" about an IP prefix, "refund
ch_3N..." about a Stripe charge. The shapes below are the public formats of those identifiers
(Jira's project keys, Stripe's object prefixes, addresses, paths, query languages), written
from the formats themselves and not from any query set. Each recognised identifier adds the
words of its kind to the request, as a thesaurus match does (`_hybrid`), so the kind counts
without outweighing what the request says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# At most this many identifiers count per request: a request pasted full of them (a log, a
# stack trace) still searches mostly for what it asks.
MAX_ENTITIES = 4


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# Upper-case words with a number that are names of standards, not issue keys.
_NOT_ISSUE_KEYS = frozenset(
    _words("AES CRC CVE ECMA ES GPT HTTP IEEE ISO IPV MD PEP RFC RSA SHA SSL TLS UTF UUID COVID")
)
# Stripe's documented object prefixes (`cus_...`), by the object they name.
_STRIPE_PREFIXES = {
    "cus": "stripe customer",
    "in": "stripe invoice",
    "ii": "stripe invoice item",
    "sub": "stripe subscription",
    "pi": "stripe payment intent",
    "ch": "stripe charge payment",
    "re": "stripe refund",
    "prod": "stripe product",
    "price": "stripe price",
    "pm": "stripe payment method",
    "dp": "stripe dispute",
    "du": "stripe dispute",
    "plink": "stripe payment link",
    "cs": "stripe checkout session",
    "coupon": "stripe coupon",
    "promo": "stripe promotion code",
}
_EXTENSIONS = _words(
    "py js ts tsx jsx mjs cjs go rs java kt rb php c h cc cpp hpp cs swift scala sh bash zsh ps1 "
    "json yaml yml toml ini cfg conf env xml html htm css scss md rst txt csv tsv sql lock log "
    "png jpg jpeg gif svg webp pdf docx xlsx pptx zip tar gz ipynb proto tf dockerfile"
)
_TLDS = _words("com org net io dev app ai co gov edu info biz me us uk de fr br pt es it nl eu")


@dataclass(frozen=True)
class _Shape:
    kind: str  # the words the request gains
    pattern: re.Pattern[str]


def _shape(kind: str, pattern: str, flags: int = 0) -> _Shape:
    return _Shape(kind, re.compile(pattern, flags))


_SHAPES = (
    _shape("url web page", r"\bhttps?://[^\s<>\"']+", re.IGNORECASE),
    _shape("email address", r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"),
    _shape("ip prefix", r"\b\d{1,3}(?:\.\d{1,3}){3}/\d{1,2}\b"),
    _shape("ip address", r"\b\d{1,3}(?:\.\d{1,3}){3}\b(?!/)"),
    _shape("ip prefix", r"\b[0-9a-f]{1,4}(?::[0-9a-f]{0,4}){2,7}/\d{1,3}\b", re.I),
    _shape("ip address", r"\b[0-9a-f]{1,4}(?::[0-9a-f]{0,4}){2,7}(?![\w/:])", re.I),
    _shape("autonomous system asn", r"\bAS\d{1,10}\b"),
    _shape("jira", r"\b(?P<project>[A-Z][A-Z0-9]{1,9})-\d{1,7}\b"),
    # Stripe's ids end in random letters and digits: "in_progress" is a word, not an invoice.
    _shape("stripe", r"\b(?P<prefix>[a-z]{2,6})_(?=[a-z]*[A-Z0-9])[A-Za-z0-9]{4,}\b"),
    _shape("github", r"(?<![\w&/])#\d{1,7}\b"),
    _shape("slack channel", r"(?<![\w&/])#[a-z][a-z0-9_-]{1,79}\b"),
    _shape(
        "file",
        r"(?<![\w@/])(?:[\w.-]+/)*[\w-]+\.(?:" + "|".join(_EXTENSIONS) + r")\b(?![\w/])",
        re.IGNORECASE,
    ),
    _shape(
        "domain",
        r"(?<![\w@./-])(?:[a-z0-9-]+\.)+(?:" + "|".join(_TLDS) + r")\b(?![\w/.@-])",
        re.IGNORECASE,
    ),
    _shape("prometheus metric query", r"\b[a-z_:][a-z0-9_:]*\{[^{}]*=~?\"[^{}]*\}", re.I),
    _shape("prometheus metric query", r"\b(?:rate|irate|increase|histogram_quantile)\("),
    _shape("loki log query", r"\{[^{}]*=~?\"[^{}]*\}\s*\|[=~]"),
    _shape(
        "sql query table",
        r"\b(?:select\s+[\w*,\s()]+\s+from|insert\s+into|delete\s+from|create\s+table|"
        r"alter\s+table|update\s+\w+\s+set)\b",
        re.IGNORECASE,
    ),
    _shape("commit", r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b"),
    _shape("release version", r"\bv\d+\.\d+(?:\.\d+)?(?:-[\w.]+)?\b"),
    _shape("time zone", r"\b(?:Africa|America|Asia|Atlantic|Australia|Europe|Pacific)/[A-Z]\w+"),
)


def entity_hints(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """Each identifier of `text` whose shape says what it names, with the words of that
    kind, first found first; at most `MAX_ENTITIES`, and each kind once."""
    found: list[tuple[int, str, str]] = []
    for shape in _SHAPES:
        for match in shape.pattern.finditer(text):
            kind = _kind(shape, match)
            if kind:
                found.append((match.start(), match.group(0), kind))
    hints: list[tuple[str, tuple[str, ...]]] = []
    kinds: set[str] = set()
    taken: list[range] = []
    for start, token, kind in sorted(found):
        span = range(start, start + len(token))
        if kind in kinds or any(start in other or other.start in span for other in taken):
            continue
        kinds.add(kind)
        taken.append(span)
        hints.append((token, tuple(kind.split())))
        if len(hints) == MAX_ENTITIES:
            break
    return hints


def _kind(shape: _Shape, match: re.Match[str]) -> str:
    groups = match.groupdict()
    if "project" in groups:
        return "" if groups["project"] in _NOT_ISSUE_KEYS else shape.kind
    if "prefix" in groups:
        return _STRIPE_PREFIXES.get(groups["prefix"], "")
    token = match.group(0)
    if shape.kind.startswith("ip ") and ":" in token and "::" not in token and token.count(":") < 5:
        return ""  # a time of day (10:30:00), not an IPv6 address
    return shape.kind
