"""Writing a review's reports: `review.md`, `review.json` and `review.sarif`, as chosen.

Each file is written to a temporary name in the output folder and moved into place, so a reader
never sees half a report; the formats are checked before anything is written.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from ._errors import ReviewInputError
from ._findings import Severity
from ._markdown import render_markdown
from ._report import ReviewReport
from ._sarif import render_sarif

FORMATS = ("md", "json", "sarif")
FILE_NAMES = {"md": "review.md", "json": "review.json", "sarif": "review.sarif"}


def parse_formats(text: str) -> tuple[str, ...]:
    """`md,json,sarif` (any subset, any order) as a tuple in the canonical order."""
    asked = [part.strip().lower() for part in text.split(",") if part.strip()]
    unknown = sorted(set(asked) - set(FORMATS))
    if unknown or not asked:
        shown = ", ".join(unknown) if unknown else "nothing"
        raise ReviewInputError(
            f"unknown report format {shown} in {text!r}; choose from {','.join(FORMATS)}"
        )
    return tuple(f for f in FORMATS if f in asked)


def render_reports(
    report: ReviewReport, formats: Iterable[str], fail_on: Severity | None
) -> dict[str, str]:
    """Each chosen format's file name and text."""
    renderers = {
        "md": lambda: render_markdown(report, fail_on),
        "json": lambda: _json(report.to_json(fail_on)),
        "sarif": lambda: _json(render_sarif(report)),
    }
    return {FILE_NAMES[f]: renderers[f]() for f in formats}


def write_reports(
    report: ReviewReport, out: Path, formats: Sequence[str], fail_on: Severity | None
) -> list[Path]:
    """Write the chosen reports into `out` (created if missing); blocking, so run it in a
    thread. Returns the paths written."""
    texts = render_reports(report, formats, fail_on)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name, text in texts.items():
        path = out / name
        partial = out / f".{name}.partial"
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
        written.append(path)
    return written


def _json(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"
