"""Reads the prompt texts that ship as package data under `agents/prompts/`.

Only this module knows where the Markdown lives; the fragment, permission and instruction
modules ask it for a text by its relative path and fill their own slots.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable

_PACKAGE = "corral.agents.prompts"


def prompt_dir(*parts: str) -> Traversable:
    """The packaged folder `agents/prompts/<parts...>`."""
    folder = files(_PACKAGE)
    for part in parts:
        folder = folder.joinpath(part)
    return folder


@cache
def read_prompt(*parts: str) -> str:
    """The text of `agents/prompts/<parts...>`, with surrounding whitespace removed."""
    return prompt_dir(*parts).read_text(encoding="utf-8").strip()


def prompt_exists(*parts: str) -> bool:
    return prompt_dir(*parts).is_file()
