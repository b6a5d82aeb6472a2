"""The event splitter: what it decodes, what it skips, and where a stream ends."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral.agents.model import ModelContextWindowExceeded
from corral.agents.model._retry import TransientFailure
from corral.agents.model._sse import MAX_EVENT_BYTES, EventSplitter, _split_events

ENDPOINT = "http://127.0.0.1:1/v1"


def sse(name: str, data: object, *, newline: str = "\n") -> bytes:
    text = f"event: {name}{newline}data: {json.dumps(data)}{newline}{newline}"
    return text.encode()


def test_events_come_out_in_order_however_the_bytes_are_cut() -> None:
    body = b"".join(sse("e", {"n": n}) for n in range(5))
    for size in (1, 2, 7, len(body)):
        splitter = EventSplitter(None, ENDPOINT)
        events = []
        for start in range(0, len(body), size):
            events += splitter.feed(body[start : start + size])
        assert [e["n"] for e in events] == list(range(5))


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_every_line_ending_the_standard_allows_is_read(newline: str) -> None:
    body = sse("a", {"n": 1}, newline=newline) + sse("b", {"n": 2}, newline=newline)
    splitter = EventSplitter(None, ENDPOINT)
    events = [e for i in range(len(body)) for e in splitter.feed(body[i : i + 1])]
    assert [*events, *splitter.close()] == [{"n": 1}, {"n": 2}]


def test_an_event_the_body_ends_in_the_middle_of_is_dropped() -> None:
    splitter = EventSplitter(None, ENDPOINT)
    assert splitter.feed(b'data: {"n": 1}\n\ndata: {"n": 2}') == [{"n": 1}]
    assert splitter.close() == []


def test_an_event_nobody_wants_is_skipped_and_one_without_a_name_is_kept() -> None:
    splitter = EventSplitter({"wanted"}, ENDPOINT)
    body = sse("delta", {"n": 1}) + sse("wanted", {"n": 2}) + b'data: {"n": 3}\n\n'
    assert splitter.feed(body) == [{"n": 2}, {"n": 3}]


def test_an_unwanted_event_is_not_decoded_so_its_bytes_cannot_fail_the_turn() -> None:
    splitter = EventSplitter({"wanted"}, ENDPOINT)
    assert splitter.feed(b"event: delta\ndata: {not json\n\n") == []


def test_multi_line_data_is_joined_and_comments_are_ignored() -> None:
    splitter = EventSplitter(None, ENDPOINT)
    assert splitter.feed(b': keep-alive\n\ndata: {"a":\ndata: 1}\n\n') == [{"a": 1}]


def test_done_ends_the_stream_and_nothing_after_it_is_read() -> None:
    splitter = EventSplitter(None, ENDPOINT)
    events = splitter.feed(b'data: {"n": 1}\n\ndata: [DONE]\n\ndata: {"n": 2}\n\n')
    assert events == [{"n": 1}]
    assert splitter.ended


def test_an_event_that_is_not_json_is_a_failed_attempt() -> None:
    with pytest.raises(TransientFailure, match="not JSON"):
        EventSplitter(None, ENDPOINT).feed(b"data: {oops\n\n")


def test_an_event_carrying_an_error_object_is_sorted_like_any_error() -> None:
    error = {"error": {"code": "context_length_exceeded", "message": "too long"}}
    with pytest.raises(ModelContextWindowExceeded, match="too long"):
        EventSplitter(None, ENDPOINT).feed(sse("x", error))
    with pytest.raises(TransientFailure, match="stream reported an error"):
        EventSplitter(None, ENDPOINT).feed(sse("x", {"error": "busy"}))


def test_an_event_that_never_ends_fails_the_attempt_instead_of_growing_without_bound() -> None:
    splitter = EventSplitter(None, ENDPOINT)
    chunk = b"data: " + b"x" * (1024 * 1024)
    with pytest.raises(TransientFailure, match="longer than"):
        for _ in range(MAX_EVENT_BYTES // len(chunk) + 2):
            splitter.feed(chunk)


def test_a_later_event_line_names_the_event_even_when_the_first_names_an_unwanted_one() -> None:
    splitter = EventSplitter({"wanted"}, ENDPOINT)
    assert splitter.feed(b'event: delta\nevent: wanted\ndata: {"n": 1}\n\n') == [{"n": 1}]


def test_done_ends_the_stream_even_in_an_event_nobody_wants() -> None:
    splitter = EventSplitter({"wanted"}, ENDPOINT)
    body = b"event: delta\ndata: [DONE]\n\n" + sse("wanted", {"n": 1})
    assert splitter.feed(body) == []
    assert splitter.ended


@pytest.mark.parametrize("name", [b"", b" ", b"wanted"])
def test_an_event_with_no_name_or_a_wanted_one_is_decoded(name: bytes) -> None:
    splitter = EventSplitter({"wanted"}, ENDPOINT)
    assert splitter.feed(b"event:" + name + b'\ndata: {"n": 1}\n\n') == [{"n": 1}]


def read_plainly(body: bytes, wanted: set[str] | None) -> list[object] | str:
    """The standard's reading, line by line, with nothing skipped early: the reference the
    splitter's quicker paths must agree with ("not JSON" for a stream that fails)."""
    text = body.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    events: list[object] = []
    for block in text.split(b"\n\n")[:-1]:
        name, data = b"", []
        for line in block.split(b"\n"):
            field, _, value = line.partition(b":")
            value = value[1:] if value.startswith(b" ") else value
            if field == b"data":
                data.append(value)
            elif field == b"event":
                name = value
        if not data:
            continue
        payload = b"\n".join(data)
        if payload.startswith(b"[DONE]"):
            break
        if wanted is not None and name and name.decode() not in wanted:
            continue
        try:
            event = json.loads(payload)
        except ValueError:
            return "not JSON"
        if isinstance(event, dict):
            events.append(event)
    return events


NAMES = ["delta", "wanted", "", " wanted", "done"]
LINES = st.one_of(
    st.sampled_from(NAMES).map(lambda name: f"event:{name}"),
    st.integers(0, 9).map(lambda n: f'data: {{"n": {n}}}'),
    st.sampled_from(["data: [DONE]", "data:[DONE]", "data:  [DONE]", ": note [DONE]", "id: 7"]),
    st.just("data: 1"),
)
BLOCKS = st.lists(LINES, min_size=1, max_size=4)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    st.lists(BLOCKS, max_size=6),
    st.sampled_from(["\n", "\r\n", "\r"]),
    st.sampled_from([None, {"wanted"}, {"delta", "wanted"}]),
    st.integers(1, 64),
)
def test_the_quick_paths_read_any_stream_as_the_standard_does(
    blocks: list[list[str]], newline: str, wanted: set[str] | None, cut: int
) -> None:
    """Whatever the lines, line ends, wanted names and the reads' sizes, the splitter finds
    the events a plain line-by-line reading finds, and stops where it stops."""
    body = "".join(newline.join(lines) + newline * 2 for lines in blocks).encode()
    splitter = EventSplitter(wanted, ENDPOINT)
    events: list[object] = []
    try:
        for start in range(0, len(body), cut):
            events += splitter.feed(body[start : start + cut])
        events += splitter.close()
    except TransientFailure:
        assert read_plainly(body, wanted) == "not JSON"
    else:
        assert events == read_plainly(body, wanted)


@settings(max_examples=500, deadline=None, derandomize=True, database=None)
@given(st.binary(max_size=24).map(lambda raw: bytes(b"a\n"[byte % 2] for byte in raw)))
def test_blocks_are_cut_at_blank_lines_exactly_as_split_cuts_them(data: bytes) -> None:
    *blocks, rest = data.split(b"\n\n")
    assert _split_events(data, 0) == (blocks, rest)
