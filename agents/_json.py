"""JSON on the hot path: orjson where it gives exactly what the standard library would, the
standard library everywhere else.

A turn encodes its request body, decodes the stream events it reads and encodes its journal
payloads; `json` spends several microseconds on each, orjson a tenth of that. The two differ at
the edges, so orjson's answer is taken only where it is the same: its output is used when it
holds no null token (orjson writes NaN and infinities as `null`, `json` as `NaN` or an error) and,
for the ASCII-only form, no byte past ASCII and no DEL (`json` escapes those); what orjson
refuses (lone surrogates, integers past 64 bits, keys that are not strings, subclasses of the JSON
types, dataclasses, dates) goes to `json`, which converts or refuses it as it always did. Two
differences are left: a float may be written in another form of the same value (`1e16` for
`1e+16`), and orjson writes enums and UUIDs, which `json` refuses (corral's payloads hold
neither). Decoding falls back the same way: orjson refuses what `json` accepts beyond the
standard (lone surrogates, `NaN`, huge numbers), and `json` then decodes it or raises its own
error; text nested past `json`'s recursion limit is a `ValueError` (`TooDeep`) like the rest.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

_OPTIONS = (
    orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
)
"""Types `json` does not encode as orjson would are handed back (to `json`) instead."""
_LONG_NUMBER = b"0" * 19
"""orjson reads an integer past 64 bits as a float, `json` as an int: text with a run of this
many digits (a number this long, or a string with as many digits, to be safe) is read by
`json`. Digits are all mapped to 0 first, which is much quicker than a regular expression."""
_DIGITS = bytes.maketrans(b"123456789", b"0" * 9)
_DIGIT_TEXT = str.maketrans("123456789", "0" * 9)


def _fast(value: Any) -> bytes | None:
    try:
        data = orjson.dumps(value, option=_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError: something only `json` knows what to do with
        return None
    # A NaN or an infinity became a null token (after `:`, `,` or `[`, or the whole text); so
    # did a None, which `json` writes the same. A string may hold these bytes too: then `json`
    # is asked for nothing worse than the same answer.
    if data.startswith(b"null") or b":null" in data or b",null" in data or b"[null" in data:
        return None
    return data


def dumps_utf8(value: Any) -> bytes:
    """`json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()`."""
    data = _fast(value)
    if data is None:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    return data


def dumps_ascii(value: Any, *, allow_nan: bool = True) -> str:
    """`json.dumps(value, allow_nan=allow_nan, separators=(",", ":"))`: ASCII-only text."""
    data = _fast(value)
    # `json` escapes DEL (0x7f) as well as every byte past ASCII; orjson writes it as it is.
    if data is None or not data.isascii() or b"\x7f" in data:
        return json.dumps(value, allow_nan=allow_nan, separators=(",", ":"))
    return data.decode("ascii")


def loads(data: bytes | bytearray | str) -> Any:
    """`json.loads(data)`."""
    if isinstance(data, str):
        long = _LONG_NUMBER.decode() in data.translate(_DIGIT_TEXT)
    else:
        long = _LONG_NUMBER in data.translate(_DIGITS)
    if not long:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    try:
        return json.loads(data)
    except RecursionError:
        # orjson stops at 1,024 levels, `json` at the interpreter's recursion limit; the text
        # comes from a model endpoint or a file, so it is bad input like any other, not a crash.
        raise TooDeep("the JSON nests too deeply to read") from None


class TooDeep(ValueError):
    """JSON nested past what `json` can read (a `ValueError`, as its other refusals are)."""
