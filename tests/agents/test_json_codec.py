"""The hot path's JSON codec gives what the standard library gives, bytes included, or falls
back to it."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral.agents._json import dumps_ascii, dumps_utf8, loads

# Floats apart: orjson may write the same value in another form (`1e16` for `1e+16`).
_SCALARS = st.none() | st.booleans() | st.integers() | st.text()
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_VALUES)
def test_encoding_gives_the_standard_librarys_bytes(value: Any) -> None:
    utf8 = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    try:
        expected = utf8.encode()
    except UnicodeEncodeError:  # a lone surrogate: the standard library refuses it, and so do we
        with pytest.raises(UnicodeEncodeError):
            dumps_utf8(value)
    else:
        assert dumps_utf8(value) == expected
    assert dumps_ascii(value) == json.dumps(value, separators=(",", ":"))


@settings(max_examples=300, deadline=None)
@given(_VALUES)
def test_decoding_gives_what_the_standard_library_decodes(value: Any) -> None:
    text = json.dumps(value)
    assert loads(text) == json.loads(text)
    assert loads(text.encode("utf-8", "surrogatepass")) == json.loads(text)


_FLOATS = st.floats(allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(st.lists(_FLOATS | st.integers(), max_size=5))
def test_numbers_keep_their_value_both_ways(numbers: list[float | int]) -> None:
    encoded = dumps_utf8(numbers)
    assert json.loads(encoded) == numbers
    text = json.dumps(numbers)
    assert loads(text) == json.loads(text)
    assert [type(n) for n in loads(text)] == [type(n) for n in numbers]


@pytest.mark.parametrize(
    "value",
    [
        {1: "int key"},
        {"big": 2**70},
        {"surrogate": "\ud800"},
        {"nested": [{"café": "naïve"}]},
        {"none": None, "text": "null"},
        {"del": "a\x7fb", "\x7f": 1},
        [float("inf")],
        {"n": float("nan")},
    ],
)
def test_what_orjson_would_write_otherwise_is_written_by_the_standard_library(value: Any) -> None:
    assert dumps_ascii(value) == json.dumps(value, separators=(",", ":"))


@pytest.mark.parametrize("value", [{"n": float("nan")}, [float("-inf")]])
def test_nan_is_refused_where_the_standard_library_refuses_it(value: Any) -> None:
    with pytest.raises(ValueError):
        dumps_ascii(value, allow_nan=False)


class _Text(str):
    pass


def test_a_subclass_of_a_json_type_is_encoded_as_the_standard_library_does() -> None:
    assert dumps_utf8({"k": _Text("v")}) == b'{"k":"v"}'


def test_objects_the_standard_library_refuses_are_refused() -> None:
    from dataclasses import dataclass

    @dataclass
    class Point:
        x: int

    with pytest.raises(TypeError):
        dumps_utf8({"p": Point(1)})


@pytest.mark.parametrize(
    "text",
    ['"\\ud800"', "NaN", "[Infinity]", "1" * 30, "-" + "9" * 19, '{"a": 1e400}', "\ufeff[]"],
)
def test_decoding_accepts_what_the_standard_library_accepts_beyond_the_standard(
    text: str,
) -> None:
    try:
        expected = json.loads(text)
    except ValueError as exc:
        with pytest.raises(ValueError, match=str(exc)[:20]):
            loads(text)
        return
    got = loads(text)
    if isinstance(expected, float) and math.isnan(expected):
        assert math.isnan(got)
    else:
        assert repr(got) == repr(expected)


def test_invalid_json_raises_the_standard_librarys_error() -> None:
    with pytest.raises(json.JSONDecodeError, match="Expecting property name enclosed"):
        loads(b"{not json")
