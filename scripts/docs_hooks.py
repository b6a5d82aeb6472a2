"""mkdocs hook: writes the configuration reference into its page from the config model at build
time, so the page cannot drift from the keys corral accepts."""

from __future__ import annotations

from typing import Any

from corral.agents._config._reference import render_reference

MARKER = "<!-- generated: config reference -->"


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    return markdown.replace(MARKER, render_reference()) if MARKER in markdown else markdown
