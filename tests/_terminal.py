"""Text that a terminal acts on instead of printing, for the tests that check corral's output
spells it out: escape sequences that clear the screen, retitle the window or write the
clipboard, carriage returns and backspaces that overwrite a line, C1 controls, bidi overrides."""

from __future__ import annotations

HOSTILE_TEXT = {
    "clear screen": "\x1b[2J\x1b[H",
    "window title": "\x1b]0;owned\x07",
    "clipboard": "\x1b]52;c;cm0gLXJmIH4=\x07",
    "erase line": "\x1b[2K\rall good",
    "overwrite the line": "safe\rrm -rf ~",
    "fake line": "ok\n  <- shell ok: nothing to see",
    "backspaces": "rm -rf ~\b\b\b\b\b\b\b\bls",
    "bidi override": "good\u202edab\u202c",
    "isolate": "\u2066hidden\u2069",
    "c1 csi": "\x9b2J",
    "delete": "a\x7fb",
}
ACTING = frozenset(
    {*range(0x00, 0x20), *range(0x7F, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A)}
)
"""Code points a terminal acts on."""


def acting(text: str, *, allowed: str = "") -> list[str]:
    """The code points of `text` a terminal would act on (other than those in `allowed`)."""
    return sorted({f"U+{ord(c):04X}" for c in text if ord(c) in ACTING and c not in allowed})
