"""Secret redaction: one `Redactor` for every text corral keeps outside the run itself.

Traces (when message capture is on) and the memory store both pass text through it before it
leaves the run, so a key the model read, printed or repeated is replaced by `[REDACTED]`. It
knows the common key shapes (OpenAI, GitHub, AWS, Slack, Google, Hugging Face, JWTs, private
key blocks, credentials in URLs, `name = value` assignments of secret-looking names) and the
values of the process's variables named like a key, token, secret or password.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

REDACTED = "[REDACTED]"
_SECRET_WORD = (
    r"api[_\-]?key|secret|token|passw(?:or)?d|credential|private[_\-]?key|access[_\-]?key|auth"
)
_NAME = rf"[A-Za-z0-9_.\-]*(?:{_SECRET_WORD})[A-Za-z0-9_.\-]*"
DEFAULT_PATTERNS = (
    r"sk-[A-Za-z0-9_\-]{12,}",
    r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}",
    r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}",
    r"\bgithub_pat_[A-Za-z0-9_]{20,}",
    r"\bglpat-[A-Za-z0-9_\-]{20,}",
    r"\b(?:AKIA|ASIA|ABIA|ACCA|AIDA|AROA|AIPA|ANPA|ANVA|AGPA)[A-Z0-9]{16}\b",
    r"\bxox[abposr]-[A-Za-z0-9\-]{10,}",
    r"\bAIza[0-9A-Za-z_\-]{35}",
    r"\bhf_[A-Za-z0-9]{30,}",
    r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)",
    r"(?i)(?<=authorization)(\s*[:=]\s*)(bearer\s+)?[^\s\"',}]+",
    r"(?i)(?<=bearer )[A-Za-z0-9._~+/\-]{8,}=*",
    # user:password@ in a URL keeps the user; the password goes.
    r"(?<=://)[^/\s:@]+:(?P<secret>[^/\s@]{3,})@",
    # `API_KEY=...`, `"client_secret": "..."`, `password: ...`: the value goes, the name stays.
    # Quotes may be escaped (`\"token\": \"...\"`), as in JSON text that holds JSON: a tool
    # call's arguments, a reported result.
    rf"(?i)\b{_NAME}(?:\\*[\"'])?\s*(?:[:=]|\s+is\s+)\s*(?:\\*[\"'])?"
    rf"(?P<secret>[^\s\"',;}}]{{6,}})",
)
_SECRET_WORDS = frozenset(
    {
        "KEY",
        "KEYS",
        "APIKEY",
        "TOKEN",
        "TOKENS",
        "SECRET",
        "SECRETS",
        "PASSWORD",
        "PASSWD",
        "PASSPHRASE",
        "CREDENTIAL",
        "CREDENTIALS",
        "AUTH",
        "PRIVATE",
        "PAT",
        "DSN",
        "COOKIE",
    }
)
_SECRET_SUFFIX = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$")
_MIN_SECRET = 8


def is_secret_name(name: str) -> bool:
    """Whether a variable named `name` holds a secret by its name (`OPENAI_API_KEY`,
    `github_token`, `DB_PASSWORD`, `APIKEY`); `PWD` and `KEYBOARD` are not."""
    upper = name.upper()
    words = set(re.split(r"[^A-Z0-9]+", upper))
    return bool(words & _SECRET_WORDS) or bool(_SECRET_SUFFIX.search(upper))


class Redactor:
    """Replaces every secret value and secret-looking match in a text with `[REDACTED]`."""

    def __init__(self, secrets: Iterable[str] = (), patterns: Iterable[str] = ()) -> None:
        values = sorted({s for s in secrets if len(s) >= _MIN_SECRET}, key=len, reverse=True)
        self._values = values
        self._patterns = [re.compile(p) for p in (*DEFAULT_PATTERNS, *patterns)]

    @classmethod
    def from_env(cls, env: Mapping[str, str], patterns: Iterable[str] = ()) -> Redactor:
        """Also redact the value of every variable named like a key, token or password."""
        secrets = [v for k, v in env.items() if is_secret_name(k)]
        return cls(secrets, patterns)

    def __call__(self, text: str) -> str:
        for value in self._values:
            text = text.replace(value, REDACTED)
        for pattern in self._patterns:
            text = pattern.sub(_replacement, text)
        return text


def _replacement(match: re.Match[str]) -> str:
    if "secret" in match.re.groupindex:
        start, end = match.span("secret")
        whole = match.group(0)
        offset = match.start()
        return whole[: start - offset] + REDACTED + whole[end - offset :]
    separator = match.group(1) if match.re.groups and match.group(1) else ""
    return separator + REDACTED
