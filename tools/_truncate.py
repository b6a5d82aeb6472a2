"""Codex's head+tail truncation of long text, on UTF-8 boundaries, with a token-count marker.

The budget is in tokens at 4 bytes per token: the first half of the byte budget and the last half
are kept and `…N tokens truncated…` replaces the middle. `HeadTailBuffer` applies the same cut to a
byte stream as it arrives, so a command's output never needs more memory than its budget.
"""

from __future__ import annotations

APPROX_BYTES_PER_TOKEN = 4


def approx_token_count(text: str) -> int:
    """Codex's token estimate: UTF-8 bytes / 4, rounded up."""
    return _tokens_for_bytes(len(text.encode("utf-8")))


def count_lines(text: str) -> int:
    """Lines as Rust's `str::lines` counts them: a final newline does not start a new line."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def truncate_middle(text: str, max_tokens: int) -> str:
    """`text` if it fits in `max_tokens`, else its head and tail around a truncation marker."""
    data = text.encode("utf-8")
    budget = max(max_tokens, 0) * APPROX_BYTES_PER_TOKEN
    if len(data) <= budget:
        return text
    head_budget, tail_budget = _split_budget(budget)
    return join_head_tail(data[:head_budget], data[len(data) - tail_budget :], total=len(data))


def format_truncated_output(text: str, max_tokens: int) -> str:
    """`truncate_middle`, prefixed with `Total output lines: L` and a blank line when it cuts."""
    if len(text.encode("utf-8")) <= max(max_tokens, 0) * APPROX_BYTES_PER_TOKEN:
        return text
    return f"Total output lines: {count_lines(text)}\n\n{truncate_middle(text, max_tokens)}"


def truncation_marker(removed_bytes: int) -> str:
    return f"…{_tokens_for_bytes(removed_bytes)} tokens truncated…"


def join_head_tail(head: bytes, tail: bytes, *, total: int) -> str:
    """Join a raw head and tail cut from `total` bytes, trimmed to whole UTF-8 characters."""
    head = head[: _char_floor(head)]
    tail = tail[_char_ceil(tail) :]
    removed = total - len(head) - len(tail)
    return _decode(head) + truncation_marker(removed) + _decode(tail)


class HeadTailBuffer:
    """Keeps the first and last halves of a byte budget of a stream; counts what it drops."""

    def __init__(self, budget: int) -> None:
        self._head_cap, self._tail_cap = _split_budget(max(budget, 0))
        self._head = bytearray()
        self._tail = bytearray()
        self.total_bytes = 0
        self._newlines = 0
        self._ends_with_newline = False

    def write(self, chunk: bytes) -> None:
        if not chunk:
            return
        self.total_bytes += len(chunk)
        self._newlines += chunk.count(b"\n")
        self._ends_with_newline = chunk.endswith(b"\n")
        room = self._head_cap - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        self._tail += chunk
        # Trim lazily so the cost stays linear; memory stays under twice the tail budget.
        if len(self._tail) > 2 * self._tail_cap + 65536:
            self._keep_tail()

    @property
    def dropped_bytes(self) -> int:
        return max(self.total_bytes - self._head_cap - self._tail_cap, 0)

    @property
    def retained_bytes(self) -> int:
        """Bytes held in memory right now (bounded by about twice the budget)."""
        return len(self._head) + len(self._tail)

    @property
    def total_lines(self) -> int:
        if self.total_bytes == 0:
            return 0
        return self._newlines + (0 if self._ends_with_newline else 1)

    def text(self) -> str:
        """The kept output; with the truncation marker in the middle when bytes were dropped."""
        self._keep_tail()
        if self.dropped_bytes == 0:
            return _decode(bytes(self._head + self._tail))
        return join_head_tail(bytes(self._head), bytes(self._tail), total=self.total_bytes)

    def _keep_tail(self) -> None:
        excess = len(self._tail) - self._tail_cap
        if excess > 0:
            del self._tail[:excess]


def _split_budget(budget: int) -> tuple[int, int]:
    head = budget // 2
    return head, budget - head


def _tokens_for_bytes(count: int) -> int:
    return -(-count // APPROX_BYTES_PER_TOKEN)


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def _char_floor(data: bytes) -> int:
    """The length of the longest prefix of `data` that ends on a character boundary."""
    end = len(data)
    start = end
    while start > 0 and _is_continuation(data[start - 1]) and end - start < 3:
        start -= 1
    if start == 0:
        return end
    lead = data[start - 1]
    width = 1 if lead < 0x80 else 2 if lead >> 5 == 0b110 else 3 if lead >> 4 == 0b1110 else 4
    return end if (end - start + 1) >= width else start - 1


def _char_ceil(data: bytes) -> int:
    """The offset of the first character boundary in `data` (skips a cut character's tail)."""
    offset = 0
    while offset < len(data) and offset < 3 and _is_continuation(data[offset]):
        offset += 1
    return offset
