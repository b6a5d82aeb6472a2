"""The other forms a known secret takes in text, for `Redactor`: encoded, escaped or split.

A key that a tool printed as base64 (a Kubernetes secret, `docker login`'s `auth`), as hex,
URL-encoded, JSON-escaped or wrapped over lines is the same key. This module derives the literal
forms of a value and the pattern of its split form, and decodes the escapes of characters keys
are made of; `_redact` decides what is replaced.
"""

from __future__ import annotations

import base64
import json
import re
from urllib.parse import quote

MIN_FORM = 8
"""A derived form shorter than this is not searched for: it would match ordinary text."""
_KEY_CHARS = re.compile(r"[A-Za-z0-9_.\-]")
_ESCAPE = re.compile(
    r"%([0-9A-Fa-f]{2})|\\u([0-9A-Fa-f]{4})|\\x([0-9A-Fa-f]{2})|&#(?:[xX]([0-9A-Fa-f]{1,6})|([0-9]{1,7}));"
)
_WRAPPED = re.compile(
    r"(?<![A-Za-z0-9+/_\-])(?:[0-9a-fA-F]{24,2048}|[A-Za-z0-9+/_\-]{16,2048}={0,2})"
)
"""A run of hex or base64 long enough to carry a key, and short enough to decode cheaply."""
_HEX = re.compile(r"[0-9a-fA-F]+")
_GAP = re.compile(r"\s+|\\[nrt]")
_GAP_PATTERN = r"(?:\s|\\[nrt])*"


def encoded_forms(value: str) -> set[str]:
    """`value` as hex, as base64 at each byte alignment (the characters that depend on it
    alone), URL-encoded and JSON-escaped; those long enough to search for."""
    data = value.encode()
    forms = {data.hex(), data.hex().upper(), quote(value, safe=""), json.dumps(value)[1:-1]}
    for offset in range(3):
        core = _base64_core(data, offset)
        forms |= {core, core.replace("+", "-").replace("/", "_")}
    return {form for form in forms if len(form) >= MIN_FORM and form != value}


def _base64_core(data: bytes, offset: int) -> str:
    """The base64 characters of `data` placed `offset` bytes into a longer text: those whose
    6 bits all come from `data`, whatever surrounds it."""
    start = -(-8 * offset // 6)
    stop = 8 * (offset + len(data)) // 6
    return base64.b64encode(b"\0" * offset + data + b"\0\0\0").decode()[start:stop]


def decode_key_escapes(text: str) -> str:
    """`text` with every escape of a letter, digit, `_`, `.` or `-` decoded: `%41`, `\\u0041`,
    `\\x41` and `&#65;` are `A`. Other escapes stay, since they may be structure (`%2F`, `\\"`)."""
    if "%" not in text and "\\" not in text and "&#" not in text:
        return text
    return _ESCAPE.sub(_decode, text)


def _decode(match: re.Match[str]) -> str:
    hex_digits = match.group(1) or match.group(2) or match.group(3) or match.group(4)
    code = int(hex_digits, 16) if hex_digits else int(match.group(5))
    char = chr(code) if code < 0x110000 else ""
    return char if _KEY_CHARS.fullmatch(char) else match.group(0)


def wrapped_tokens(text: str) -> list[tuple[int, int, str]]:
    """Each hex or base64 run in `text` that decodes to text: its span and what it says."""
    found = []
    for match in _WRAPPED.finditer(text):
        # An identifier (`some_long_name`) is not worth decoding: encoded text has capitals
        # or digits, and long outputs hold thousands of identifiers.
        token = match.group(0)
        if token.islower() and not _HEX.fullmatch(token):
            continue
        decoded = _decoded(token)
        if decoded is not None:
            found.append((match.start(), match.end(), decoded))
    return found


def _decoded(token: str) -> str | None:
    raw: bytes | None = None
    if len(token) % 2 == 0 and _HEX.fullmatch(token):
        raw = bytes.fromhex(token)
    else:
        padded = token + "=" * (-len(token) % 4)
        try:
            raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
        except ValueError:
            return None
    try:
        text = raw.decode()
    except UnicodeDecodeError:
        return None
    return text if text.isprintable() or text.strip().isprintable() else None


def squeeze(text: str) -> str:
    """`text` without whitespace and escaped newlines or tabs (`\\n` written out)."""
    return _GAP.sub("", text)


def split_form(form: str) -> re.Pattern[str]:
    """A pattern for `form` with whitespace or escaped newlines anywhere between its chars."""
    chars = [re.escape(c) for c in form if not c.isspace()]
    return re.compile(_GAP_PATTERN.join(chars))
