"""Live progress of a run on stderr, the one component every run-starting command shows.

It listens to the agents through the runner's hooks and keeps counts (done, failed, running),
tokens, cost (a dash for a model without a price), the elapsed time and an estimate of what is
left, and the names of the workers running. On a terminal it redraws one status line in place;
when stderr is not a terminal it prints one plain line per finished worker instead; `--quiet`
prints nothing. Colour only on a terminal, and never with `NO_COLOR` set.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TextIO

from corral.agents import AgentStatus, RunnerHooks, cost_of, format_cost

if TYPE_CHECKING:
    from corral.agents import ModelPrice, ModelRequest, ModelResponse

Mode = Literal["live", "lines", "quiet"]
REDRAW_EVERY = 0.1
"""Seconds between two redraws of the live line; finishing workers redraw at once."""
_NAMES_SHOWN = 3
_DONE = frozenset({AgentStatus.COMPLETED})


def progress_mode(stream: TextIO, *, quiet: bool) -> Mode:
    """Quiet when asked, live on a terminal, plain lines otherwise."""
    if quiet:
        return "quiet"
    return "live" if _is_tty(stream) and not _dumb_terminal() else "lines"


@dataclass
class Tally:
    """What the progress line says; kept apart from drawing so it can be read and tested."""

    total: int | None = None
    done: int = 0
    failed: int = 0
    running: dict[str, str] = field(default_factory=dict)
    tokens: int = 0
    cost_usd: float = 0.0

    @property
    def finished(self) -> int:
        return self.done + self.failed


class LiveProgress(RunnerHooks):
    """The progress of one command's run on `out` (stderr), in `mode`."""

    def __init__(
        self,
        command: str,
        *,
        out: TextIO | None = None,
        mode: Mode | None = None,
        price_of: Callable[[str], ModelPrice | None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        color: bool | None = None,
    ) -> None:
        self.command = command
        self.out = out if out is not None else sys.stderr
        self.mode: Mode = mode if mode is not None else progress_mode(self.out, quiet=False)
        self.tally = Tally()
        self._price_of = price_of
        self._clock = clock
        self._start = clock()
        self._last_draw = float("-inf")
        self._drawn = False
        self._color = _wants_color(self.out) if color is None else color
        self._labels: dict[str, str] = {}

    def name_items(self, labels: tuple[str, ...]) -> None:
        """Call item workers by what they work on (`labels` in item order), not "item N"."""
        self._labels = {f"item {index}": label for index, label in enumerate(labels)}

    # -- what the run tells us ------------------------------------------------------------

    def started(self, run_id: str, total: int, left: int) -> None:
        """A fan-out's items are journaled: `total` in all, `left` still to run."""
        self.tally.total = total
        self.tally.done += total - left  # finished before a resume
        todo = "" if left == total else f", {left} to go"
        noun = "item" if total == 1 else "items"
        self._say(f"run {run_id} ({total} {noun}{todo})", always=True)

    def agent_started(self, agent_id: str, parent_id: str | None, name: str) -> None:
        self.tally.running[agent_id] = self._labels.get(name, name)
        self._draw()

    def turn_ended(self, agent_id: str, turn: int, status: AgentStatus) -> None:
        if status is AgentStatus.RUNNING or agent_id not in self.tally.running:
            return
        name = self.tally.running.pop(agent_id)
        if status in _DONE:
            self.tally.done += 1
        else:
            self.tally.failed += 1
        if self.mode == "lines":
            self._line(f"{name} {status}")
        self._draw(force=True)

    def model_call_ended(
        self,
        agent_id: str,
        request: ModelRequest,
        response: ModelResponse | None,
        error: BaseException | None,
    ) -> None:
        if response is None:
            return
        usage = response.usage
        self.tally.tokens += usage.input_tokens + usage.output_tokens
        price = self._price_of(request.model) if self._price_of is not None else None
        self.tally.cost_usd += cost_of(usage, price)
        self._draw()

    # -- drawing --------------------------------------------------------------------------

    def close(self) -> None:
        """End the live line, so what is printed next starts on a line of its own."""
        if self.mode == "live" and self._drawn:
            self._draw(force=True)
            self.out.write("\n")
            self.out.flush()
            self._drawn = False

    def status_text(self) -> str:
        """The status line without colour: counts, tokens, cost, time, and who is running."""
        t = self.tally
        count = f"{t.done}/{t.total} done" if t.total is not None else f"{t.done} done"
        parts = [count, f"{t.failed} failed", f"{len(t.running)} running"]
        facts = [", ".join(parts), f"{t.tokens:,} tokens", format_cost(t.cost_usd), self._times()]
        names = self._names()
        return " · ".join(facts) + (f" · {names}" if names else "")

    def _times(self) -> str:
        elapsed = self._clock() - self._start
        text = f"{_clock_text(elapsed)} elapsed"
        t = self.tally
        if t.total is not None and t.finished and t.total > t.finished:
            left = elapsed / t.finished * (t.total - t.finished)
            text += f", about {_clock_text(left)} left"
        return text

    def _names(self) -> str:
        names = list(self.tally.running.values())
        shown = ", ".join(names[:_NAMES_SHOWN])
        more = len(names) - _NAMES_SHOWN
        return shown + (f" +{more}" if more > 0 else "")

    def _draw(self, *, force: bool = False) -> None:
        if self.mode != "live":
            return
        now = self._clock()
        if not force and now - self._last_draw < REDRAW_EVERY:
            return
        self._last_draw = now
        width = shutil.get_terminal_size(fallback=(100, 24)).columns
        text = f"corral {self.command}: {self.status_text()}"[: max(width - 1, 20)]
        self.out.write("\r\x1b[2K" + self._paint(text))
        self.out.flush()
        self._drawn = True

    def _line(self, event: str) -> None:
        t = self.tally
        of = f"[{t.finished}/{t.total}] " if t.total is not None else ""
        self._say(
            f"{of}{event} · {t.tokens:,} tokens · {format_cost(t.cost_usd)} · {self._times()}"
        )

    def _say(self, text: str, *, always: bool = False) -> None:
        if self.mode == "quiet" and not always:
            return
        prefix = "\r\x1b[2K" if self._drawn else ""
        self.out.write(f"{prefix}corral {self.command}: {text}\n")
        self.out.flush()
        self._drawn = False

    def _paint(self, text: str) -> str:
        if not self._color:
            return text
        return text.replace(" failed", "\x1b[31m failed\x1b[0m").replace(
            " done", "\x1b[32m done\x1b[0m"
        )


def _clock_text(seconds: float) -> str:
    whole = max(int(seconds), 0)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02}:{secs:02}" if hours else f"{minutes}:{secs:02}"


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _wants_color(stream: TextIO) -> bool:
    # https://no-color.org: any non-empty NO_COLOR turns colour off.
    return _is_tty(stream) and not os.environ.get("NO_COLOR") and not _dumb_terminal()


def _dumb_terminal() -> bool:
    # TERM=dumb (Emacs shell buffers, some CI consoles) understands no escape sequence: the
    # live line's erase and the colours would show as litter, so it gets plain lines.
    return os.environ.get("TERM") == "dumb"
