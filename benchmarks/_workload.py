"""What every driver of `benchmarks.turns` gives its agents: the instructions and the model."""

from __future__ import annotations

INSTRUCTIONS = (
    "You are a careful worker in a benchmark. Call the tool step with the number you were "
    "given, then call it again with the number it returns, until you are told to stop. "
) * 12
"""About 2 KB, like a real agent's instructions."""
MODEL = "bench-model"
