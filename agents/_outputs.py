"""What a tool's output becomes in the journal: the text the model sees, its size and hash.

A tool may answer 50 MB; the model sees its head and tail within the agent's token limit, and
only that is journaled, once, in the `tool_result` event, capped at `max_tool_output_bytes`,
with the full size and a sha256 of the whole output. The side-effect ledger keeps a small output
as well (so a crash between the two writes loses nothing) and, for a larger one, a note naming
its size and hash. Both executors journal a call's output through `journaled_result` and
`ledger_output`.
"""

from __future__ import annotations

import hashlib

from corral.tools import HookRun, ToolOutput
from corral.tools._truncate import APPROX_BYTES_PER_TOKEN, truncate_middle

from ._events import ToolResult

DEFAULT_MAX_TOOL_OUTPUT_BYTES = 4 * 1024 * 1024
LEDGER_INLINE_BYTES = 16 * 1024
"""Outputs up to this size are kept in the ledger too (tool answers such as `report_result`'s
judgement are read back from it); larger ones are kept in the journal event alone."""
_MARKER_ROOM = 64
"""Bytes left under the cap for the truncation marker `truncate_middle` puts in the middle."""
LEDGER_ELIDED = "[corral: output kept once, in the journal's tool_result event: "


def visible_result(
    call_id: str,
    text: str,
    success: bool,
    *,
    token_limit: int,
    max_bytes: int,
    network_denials: tuple[str, ...] = (),
    hook_runs: tuple[HookRun, ...] = (),
    images: tuple[str, ...] = (),
) -> ToolResult:
    """The `ToolResult` to journal for a call that answered `text`: cut as the model sees it.
    `images` (data URLs, already capped by the tool) are kept whole."""
    data = text.encode("utf-8", errors="surrogatepass")
    tokens = min(token_limit, max(max_bytes - _MARKER_ROOM, 0) // APPROX_BYTES_PER_TOKEN)
    return ToolResult(
        call_id=call_id,
        output=truncate_middle(text, tokens),
        success=success,
        total_bytes=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        network_denials=network_denials,
        hook_runs=hook_runs,
        images=images,
    )


def journaled_result(
    call_id: str, output: ToolOutput, *, token_limit: int, max_bytes: int
) -> ToolResult:
    """`visible_result` of what a tool answered, with the denials, hook runs and images it
    reported beside its text."""
    return visible_result(
        call_id,
        output.text,
        output.success,
        token_limit=token_limit,
        max_bytes=max_bytes,
        network_denials=output.network_denials,
        hook_runs=output.hook_runs,
        images=output.images,
    )


def lost_output(call_id: str, name: str, success: bool) -> str:
    """What the model is told of a call that ended but whose large output (kept in the journal
    alone) never reached it: the process running the agent stopped between the two writes."""
    outcome = "succeeded" if success else "failed"
    return (
        f"The tool call `{call_id}` (`{name}`) {outcome}, but the process running "
        "this agent stopped before its output was journaled, so the output is lost. It will "
        "not be run again automatically; check its effects if you need what it answered."
    )


def ledger_output(result: ToolResult) -> str:
    """What the ledger keeps of `result`: the text if it is small, else a note of its size."""
    small = len(result.output.encode("utf-8", errors="surrogatepass")) <= LEDGER_INLINE_BYTES
    if small and not is_elided(result.output):
        return result.output
    return f"{LEDGER_ELIDED}{result.total_bytes} bytes, sha256 {result.sha256}]"


def is_elided(ledger_text: str) -> bool:
    """Whether a ledger output is the note `ledger_output` leaves instead of a large text.

    A tool whose own output starts like the note is elided too, so the note cannot be forged.
    """
    return ledger_text.startswith(LEDGER_ELIDED)
