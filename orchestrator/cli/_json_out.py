"""JSON for the CLI's `--json` output: UTF-8 text as it is, except the characters a terminal
would act on, which JSON allows raw inside a string but a terminal reads as commands."""

from __future__ import annotations

import json
import re
from typing import Any

# C1 controls (U+0080-U+009F: a UTF-8 terminal may read U+009B as CSI) and bidi overrides;
# JSON itself already escapes U+0000-U+001F. They can only occur inside strings, where
# `\uXXXX` is the same character to any JSON reader.
_ACTING = re.compile("[\u007f-\u009f\u202a-\u202e\u2066-\u2069]")


def json_text(value: Any) -> str:
    """`value` as one line of JSON that is safe to show on a terminal."""
    return _ACTING.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False))
