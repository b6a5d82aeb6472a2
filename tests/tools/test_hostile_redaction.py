"""Attacks on the redactor that guards memories and traces: a secret in another form.

A run under attack can print a key any way a tool would: base64 (a Kubernetes secret, a Docker
`auth`), hex, URL-encoded, JSON- or HTML-escaped, wrapped over lines; a provider's key may have
a shape the redactor did not know; an `Authorization` header may use a scheme other than
`Bearer`. What the redactor passes reaches the memory store and every later prompt.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from urllib.parse import quote

import pytest

from corral.tools import Redactor

pytestmark = pytest.mark.hostile

KNOWN = "zq8-Vr3nQ-deploy-value-7781"
"""The value of a variable named like a secret: the redactor knows it, but not its shape."""
KEY = "sk-proj-Q7hd82JdkEI2ndkQ0aP1xYz"
"""A key known only by its shape."""


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def wrapped(text: str, width: int = 10) -> str:
    return "\n".join(text[i : i + width] for i in range(0, len(text), width))


ENCODINGS: dict[str, Callable[[str], str]] = {
    "base64": b64,
    "base64-after-one-byte": lambda v: b64("x" + v + "tail"),
    "base64-after-two-bytes": lambda v: b64("xy:" + v),
    "base64-urlsafe": lambda v: base64.urlsafe_b64encode(("??" + v).encode()).decode(),
    "base64-wrapped": lambda v: wrapped(b64("ab" + v), 12),
    "hex": lambda v: v.encode().hex(),
    "hex-upper": lambda v: v.encode().hex().upper(),
    "url-encoded": lambda v: quote(v, safe=""),
    "every-char-percent-encoded": lambda v: "".join(f"%{ord(c):02X}" for c in v),
    "json-unicode-escapes": lambda v: "".join(f"\\u{ord(c):04x}" for c in v),
    "python-hex-escapes": lambda v: "".join(f"\\x{ord(c):02x}" for c in v),
    "html-entities": lambda v: "".join(f"&#{ord(c)};" for c in v),
    "split-by-a-newline": lambda v: v[:9] + "\n" + v[9:],
    "split-by-an-escaped-newline": lambda v: v[:9] + "\\n" + v[9:],
    "spaced-out": " ".join,
    "wrapped-in-json": lambda v: json.dumps({"note": v[:12] + "\n" + v[12:]}),
}


def leaked(secret: str, shown: str) -> bool:
    """Whether `shown` still holds `secret`, or a third of it, in any of the forms above."""
    pieces = [secret[i : i + len(secret) // 3] for i in range(0, len(secret), len(secret) // 3)]
    pieces = [p for p in pieces if len(p) >= 6]
    return any(p in shown or p in " ".join(shown.split()).replace(" ", "") for p in pieces)


@pytest.mark.parametrize("encode", list(ENCODINGS.values()), ids=list(ENCODINGS))
def test_a_known_secret_in_another_form_is_redacted(encode: Callable[[str], str]) -> None:
    redact = Redactor.from_env({"DEPLOY_TOKEN": KNOWN})
    shown = redact(f"the settings: {encode(KNOWN)} (done)")
    assert "[REDACTED]" in shown
    assert encode(KNOWN) not in shown
    assert not leaked(KNOWN, shown)
    assert shown.startswith("the settings: ") and shown.endswith(" (done)")


@pytest.mark.parametrize(
    "encode",
    [
        b64,
        lambda v: b64('{"key": "' + v + '"}'),
        lambda v: v.encode().hex(),
        lambda v: v.replace("-", "%2D"),
        lambda v: v.replace("-", "\\u002d", 1),
        lambda v: v.replace("-", "&#45;"),
    ],
    ids=["base64", "base64-json", "hex", "percent-dash", "json-escaped-dash", "html-dash"],
)
def test_a_key_shape_wrapped_in_an_encoding_is_redacted(encode: Callable[[str], str]) -> None:
    shown = Redactor()(f"found {encode(KEY)} in the cache")
    assert encode(KEY) not in shown and "[REDACTED]" in shown
    assert KEY[8:] not in shown


SHAPES = [
    "npm_abcdefghijABCDEFGHIJ0123456789abcd",
    "pypi-AgEIcHlwaS5vcmcCJGI4YzJmYjQ1LTc1OTktNGJjOS1hYmU2LWQ3ZDgzNTg4NDA0MwACKlszLCJh",
    "https://hooks.slack.com/services/T0AAAAAAA/B0BBBBBBB/XXXXXXXXXXXXXXXXXXXXXXXX",
    "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",
    "ya29.a0AfH6SMBx1234567890abcdefghijklmnopqrstuvwxyz",
    "GOCSPX-abcdefghijklmnopqrstuvwxyz12",
    "dop_v1_" + "0123456789abcdef" * 4,
    "shpat_" + "0123456789abcdef" * 2,
    "glptt-abcdefghij0123456789",
    "gldt-abcdefghij0123456789",
    "gsk_" + "A1b2" * 12,
    "xai-" + "A1b2" * 12,
    "r8_" + "A1b2" * 9,
    "dapi" + "0123456789abcdef" * 2,
    "AccountKey=" + "A1b2" * 20 + "==",
    "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBGabcdef\n-----END PGP PRIVATE KEY BLOCK-----",
]


@pytest.mark.parametrize("secret", SHAPES)
def test_a_provider_key_shape_is_redacted(secret: str) -> None:
    shown = Redactor()(f"use {secret} to deploy")
    assert "[REDACTED]" in shown and secret[-12:] not in shown


CREDENTIALS = [
    ("Authorization: Basic " + b64("deploy:hunter2pass"), b64("deploy:hunter2pass")),
    ('"authorization": "Token abcdef0123456789"', "abcdef0123456789"),
    ("Proxy-Authorization: Digest username=x, response=6629fae49393a053", "6629fae49393a053"),
    ("https://deploy:p@ss-w0rd-x@db.internal/app", "ss-w0rd-x"),
    ("curl -u deploy:hunter2pass https://example.com", "hunter2pass"),
    ("curl --user=deploy:hunter2pass https://example.com", "hunter2pass"),
]


@pytest.mark.parametrize(("text", "secret"), CREDENTIALS)
def test_credentials_in_any_http_auth_spelling_are_redacted(text: str, secret: str) -> None:
    shown = Redactor()(text)
    assert secret not in shown and "[REDACTED]" in shown


@pytest.mark.parametrize(
    "text",
    [
        "Run the tests with `make check`; see http://localhost:8080/docs and a@b.example.",
        'The escaped quote is "a\\u0022b" and the path is a%2Fb.',
        "commit 3f2a9c01b7de3f2a9c01b7de3f2a9c01b7de3f2a touched src/corral/_redact_forms.py",
        "aGVsbG8gd29ybGQgaGVsbG8gd29ybGQ= is base64 of a greeting",
    ],
)
def test_ordinary_text_passes_through_unchanged(text: str) -> None:
    assert Redactor.from_env({"DEPLOY_TOKEN": KNOWN})(text) == text
