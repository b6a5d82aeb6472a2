"""Secret redaction: one `Redactor` for every text corral keeps outside the run itself.

Traces (when message capture is on) and the memory store both pass text through it before it
leaves the run, so a key the model read, printed or repeated is replaced by `[REDACTED]`. It
knows the common key shapes (OpenAI, GitHub, AWS, Slack, Google, Hugging Face, JWTs, private
key blocks, credentials in URLs, `name = value` assignments of secret-looking names) and the
values of the process's variables named like a key, token, secret or password.

A known value is found in the forms a tool or a model naturally gives it: hex, base64 (at any
byte alignment, wrapped over lines or not), split by whitespace or escaped newlines, and with
characters written as `%XX`, `\\uXXXX`, `\\xXX` or `&#N;` escapes. Escapes of the characters a
key is made of are decoded first (nobody writes `%41` for `A` but to hide it), so the key shapes
see them too. `_redact_forms` derives those forms.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from ._redact_forms import decode_key_escapes, encoded_forms, split_form, squeeze, wrapped_tokens

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
    # npm, PyPI, Slack webhooks, SendGrid, Google OAuth, DigitalOcean, Shopify, GitLab's other
    # token kinds, Groq, xAI, Replicate, Databricks, Azure storage keys.
    r"\bnpm_[A-Za-z0-9]{30,}",
    r"\bpypi-[A-Za-z0-9_\-]{40,}",
    r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{20,}",
    r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}",
    r"\bya29\.[A-Za-z0-9_\-]{20,}",
    r"\bGOCSPX-[A-Za-z0-9_\-]{20,}",
    r"\bdo[opr]_v1_[a-f0-9]{64}",
    r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}",
    r"\bgl(?:ptt|dt|rt|soat|cbt|imt|agent|ft|oas|ffct)-[A-Za-z0-9_\-]{20,}",
    r"\bgsk_[A-Za-z0-9]{40,}",
    r"\bxai-[A-Za-z0-9]{40,}",
    r"\br8_[A-Za-z0-9]{30,}",
    r"\bdapi[a-f0-9]{32}",
    r"(?i)\b(?:Account|SharedAccess)Key\s*=\s*(?P<secret>[A-Za-z0-9+/]{20,}=*)",
    r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    r"-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
    r"(?:-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    # Every scheme's credentials, not only a bearer token's: `Basic` carries user:password.
    # The whole value, to the end of its line or string: `Digest` lists several parameters.
    r"(?i)(?<=authorization)(\\*[\"']?[ \t]*[:=][ \t]*\\*[\"']?)[^\r\n\"'\\}]*[^\s\"'\\},]",
    r"(?i)(?<=bearer )[A-Za-z0-9._~+/\-]{8,}=*",
    r"(?i)(?<=basic )[A-Za-z0-9+/]{8,}=*",
    # user:password@ in a URL keeps the user; the password goes, `@` in it included.
    r"(?<=://)[^/\s:@]*:(?P<secret>[^/\s\"'<>]{3,})@",
    # `curl -u user:password`, `--user user:password`.
    r"(?<!\S)(?:-u|--user)[ =]+[^\s:]+:(?P<secret>[^\s\"']{3,})",
    # `API_KEY=...`, `"client_secret": "..."`, `password: ...`: the value goes, the name stays.
    # Quotes may be escaped (`\"token\": \"...\"`), as in JSON text that holds JSON: a tool
    # call's arguments, a reported result.
    rf"(?i)\b{_NAME}(?:\\*[\"'])?\s*(?:[:=]|\s+is\s+)\s*(?:\\*[\"'])?"
    # A backslash ends the value only where it escapes the closing quote.
    rf"(?P<secret>(?:[^\s\"',;}}\\]|\\(?![\"'])){{6,}})",
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
        known = {s for s in secrets if len(s) >= _MIN_SECRET}
        forms = {form for value in known for form in (value, *encoded_forms(value))}
        self._values = sorted(forms, key=len, reverse=True)
        self._squeezed = [(squeeze(form), form) for form in self._values]
        self._split: dict[str, re.Pattern[str]] = {}
        self._patterns = _compiled([*DEFAULT_PATTERNS, *patterns])

    @classmethod
    def from_env(cls, env: Mapping[str, str], patterns: Iterable[str] = ()) -> Redactor:
        """Also redact the value of every variable named like a key, token or password."""
        secrets = [v for k, v in env.items() if is_secret_name(k)]
        return cls(secrets, patterns)

    def __call__(self, text: str) -> str:
        return self._redact_wrapped(self._redact_plain(decode_key_escapes(text)))

    def _redact_plain(self, text: str) -> str:
        for value in self._values:
            text = text.replace(value, REDACTED)
        text = self._redact_split(text)
        for pattern in self._patterns:
            text = pattern.sub(_replacement, text)
        return text

    def _redact_wrapped(self, text: str) -> str:
        """A hex or base64 run whose decoded text holds a secret goes whole (`Basic` credentials,
        a key shape wrapped by `base64`)."""
        for start, end, decoded in reversed(wrapped_tokens(text)):
            if self._redact_plain(decoded) != decoded:
                text = text[:start] + REDACTED + text[end:]
        return text

    def _redact_split(self, text: str) -> str:
        """A known value (or form of it) broken up by whitespace or escaped newlines. The
        squeezed text is checked first, so the slower pattern runs only when one is there."""
        if not self._squeezed:
            return text
        squeezed = squeeze(text)
        for compact, form in self._squeezed:
            if compact in squeezed:
                if form not in self._split:
                    self._split[form] = split_form(form)
                text = self._split[form].sub(REDACTED, text)
        return text


def _compiled(patterns: list[str]) -> list[re.Pattern[str]]:
    """The patterns, those of plain key shapes (`\\b`, a prefix, no groups) joined into one:
    each pass over a long tool output costs about as much, so the fewer passes the better."""
    shapes = [p.removeprefix("\\b") for p in patterns if _plain_shape(p)]
    rest = [p for p in patterns if not _plain_shape(p)]
    joined = [rf"(?<!\w)(?:{'|'.join(shapes)})"] if shapes else []
    return [re.compile(p) for p in (*joined, *rest)]


def _plain_shape(pattern: str) -> bool:
    return pattern.startswith("\\b") and "(" not in pattern.replace("(?:", "")


def _replacement(match: re.Match[str]) -> str:
    if "secret" in match.re.groupindex:
        start, end = match.span("secret")
        whole = match.group(0)
        offset = match.start()
        return whole[: start - offset] + REDACTED + whole[end - offset :]
    separator = match.group(1) if match.re.groups and match.group(1) else ""
    return separator + REDACTED
