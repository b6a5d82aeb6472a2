import pytest

from corral.tools._truncate import (
    HeadTailBuffer,
    approx_token_count,
    count_lines,
    format_truncated_output,
    truncate_middle,
)

TEN_LINES = "".join(f"line {i}\n" for i in range(10))


def test_text_within_the_budget_is_returned_unchanged() -> None:
    assert truncate_middle("hello world", 3) == "hello world"
    assert truncate_middle("", 0) == ""


def test_long_text_keeps_the_first_and_last_halves_around_the_marker() -> None:
    assert truncate_middle("abcdefghijklmnopqrstuvwxyz", 2) == "abcd…5 tokens truncated…wxyz"


def test_a_zero_budget_leaves_only_the_marker() -> None:
    assert truncate_middle("hello", 0) == "…2 tokens truncated…"


def test_marker_counts_removed_bytes_over_four_rounded_up() -> None:
    text = "x" * 17
    assert truncate_middle(text, 1) == "xx…4 tokens truncated…xx"  # 13 bytes removed


def test_cuts_never_split_a_utf8_character() -> None:
    assert truncate_middle("ééééé", 1) == "é…2 tokens truncated…é"
    assert truncate_middle("aé" * 5, 1) == "a…3 tokens truncated…é"
    assert truncate_middle("aé" * 5, 2) == "aéa…2 tokens truncated…aé"


def test_formatted_output_announces_the_total_line_count_when_it_cuts() -> None:
    expected = "Total output lines: 10\n\nline 0\nl…14 tokens truncated…\nline 9\n"
    assert format_truncated_output(TEN_LINES, 4) == expected


def test_formatted_output_is_unchanged_when_nothing_is_cut() -> None:
    assert format_truncated_output(TEN_LINES, 100) == TEN_LINES


@pytest.mark.parametrize(
    ("text", "lines"),
    [("", 0), ("a", 1), ("a\n", 1), ("a\nb", 2), ("a\nb\n", 2), ("\n\n", 2)],
)
def test_lines_are_counted_like_rust_str_lines(text: str, lines: int) -> None:
    assert count_lines(text) == lines


def test_token_estimate_is_bytes_over_four_rounded_up() -> None:
    assert [approx_token_count(t) for t in ("", "a", "abcd", "abcde", "é")] == [0, 1, 1, 2, 1]


@pytest.mark.parametrize("chunk", [1, 3, 7, 4096])
@pytest.mark.parametrize("tokens", [0, 1, 2, 5, 50])
@pytest.mark.parametrize("text", [TEN_LINES, "aé€😀" * 40, "short", ""])
def test_streamed_buffer_cuts_exactly_like_truncate_middle(
    text: str, tokens: int, chunk: int
) -> None:
    buffer = HeadTailBuffer(tokens * 4)
    data = text.encode()
    for start in range(0, len(data), chunk):
        buffer.write(data[start : start + chunk])
    assert buffer.text() == truncate_middle(text, tokens)
    assert buffer.total_lines == count_lines(text)
    assert buffer.total_bytes == len(data)


def test_streamed_buffer_holds_no_more_than_about_twice_its_budget() -> None:
    buffer = HeadTailBuffer(1000)
    chunk = b"y\n" * 32768
    for _ in range(160):  # 10 MiB
        buffer.write(chunk)
        assert buffer.retained_bytes <= 2 * 1000 + 2 * len(chunk)
    assert buffer.dropped_bytes == 160 * len(chunk) - 1000
    assert buffer.text().startswith("y\n" * 250 + "…")
    assert buffer.total_lines == 160 * 32768
