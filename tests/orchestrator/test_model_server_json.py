"""The server's fast JSON writes exactly what `json.dumps` writes, whatever the value holds."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral.orchestrator.model_server._json import dumps, is_plain, parse, private_copy

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()  # past 64 bits too: orjson refuses those
    | st.floats()  # NaN, the infinities, tiny and huge ones
    | st.text()  # lone surrogates too
)
VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


def _reference(value: Any, sort_keys: bool) -> bytes | type[Exception]:
    try:
        text = json.dumps(value, sort_keys=sort_keys, ensure_ascii=False, separators=(",", ":"))
        return text.encode()
    except UnicodeEncodeError:
        return UnicodeEncodeError


def _ours(value: Any, plain: bool, sort_keys: bool) -> bytes | type[Exception]:
    try:
        return dumps(value, plain=plain, sort_keys=sort_keys)
    except UnicodeEncodeError:
        return UnicodeEncodeError


@settings(max_examples=400, deadline=None)
@given(value=VALUES, sort_keys=st.booleans())
def test_a_value_judged_plain_is_written_byte_for_byte_as_json_writes_it(
    value: Any, sort_keys: bool
) -> None:
    assert _ours(value, is_plain(value), sort_keys) == _reference(value, sort_keys)


@settings(max_examples=400, deadline=None)
@given(value=VALUES, sort_keys=st.booleans())
def test_a_parsed_body_is_written_back_byte_for_byte_as_json_writes_it(
    value: Any, sort_keys: bool
) -> None:
    try:
        raw = json.dumps(value).encode()  # ASCII escapes: lone surrogates travel as text
    except ValueError:
        return
    parsed, checked = parse(raw)
    assert _ours(parsed, checked.plain, sort_keys) == _reference(parsed, sort_keys)


@pytest.mark.parametrize(
    "raw",
    [b'{"x": 1e-05}', b'{"x": NaN}', b"[Infinity]", b"[1e400]", b'{"x": [0.5, 1e-7]}'],
)
def test_a_body_with_a_float_orjson_writes_otherwise_is_not_plain(raw: bytes) -> None:
    _, checked = parse(raw)
    assert not checked.plain


def test_the_policys_copy_is_equal_and_shares_nothing_with_the_original() -> None:
    original: Any = {"a": [{"b": 1}, "c", 123456789012345678901234], "d": {"e": 0.5}}
    for plain in (True, False):
        copied = private_copy(original, plain=plain)
        copied["a"][0]["b"] = 2
        copied["d"]["e"] = 1.5
        assert original == {"a": [{"b": 1}, "c", 123456789012345678901234], "d": {"e": 0.5}}
        assert copied["a"][2] == 123456789012345678901234
        assert isinstance(copied["a"][2], int)
