"""The checks on a provider's extra query parameters and headers, and the query's encoding.

Codex's `[model_providers.ID]` tables add `query_params`, `http_headers` and `env_http_headers`
(header name -> the environment variable holding its value) to every model request. Each name and
value is checked here, once, wherever it comes from (a config file, a journaled spec, the
environment): nothing may split a header or a request line, and none may take over the headers
corral sets itself. Sending them is `_http`'s job; which endpoint gets the secret ones is
`_settings`'s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated
from urllib.parse import quote

from pydantic import AfterValidator

__all__ = [
    "EnvHeaders",
    "Headers",
    "QueryParams",
    "allowed_headers",
    "check_env_headers",
    "check_header_value",
    "check_headers",
    "check_query_params",
    "encode_query",
]

# RFC 9110 `token`: what a header name may be made of.
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Headers corral sets or that frame the request: set by a table, they would change how the body
# is read, which host serves it, or which key is used (the key is always `env_key`'s, as Bearer).
_RESERVED = frozenset(
    [
        "authorization",
        "proxy-authorization",
        "host",
        "content-length",
        "content-type",
        "content-encoding",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "upgrade",
        "te",
        "trailer",
        "expect",
        "accept",
    ]
)
# A credential written in the config file itself; from an environment variable it is allowed.
# `http_headers` and `query_params` are journaled with every spec, so a name that looks like it
# carries one (`api-key`, `X-Goog-Api-Key`, `Ocp-Apim-Subscription-Key`, `api_key`, `Cookie`,
# `X-Auth-Token`, `?key=`, `?sig=`) is refused whatever its spelling: the words are looked for
# in the name's letters alone, and a few short ones as whole parts of it.
_SECRET_WORDS = ("key", "token", "secret", "passw", "cookie", "credential", "auth", "signature")
_SECRET_PARTS = frozenset({"sig", "pat", "pwd", "jwt", "sas"})
_PARTS = re.compile(r"[^a-z0-9]+")


def check_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """`http_headers` as given; raises `ValueError` naming the first header that is refused."""
    _check_names(headers)
    for name, value in headers.items():
        if _names_a_credential(name):
            raise ValueError(
                f"header {name!r} carries a credential, which a config file must not hold; "
                f'put it in an environment variable and use env_http_headers = {{ "{name}" = '
                '"VARIABLE" }'
            )
        if not _visible(value):
            raise ValueError(
                f"the value of header {name!r} holds a line break, a control or a non-ASCII "
                "character; use visible ASCII characters only"
            )
    return dict(headers)


def check_env_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """`env_http_headers` as given: header names, each with the variable that holds its value."""
    _check_names(headers)
    for name, variable in headers.items():
        if not _ENV_NAME.fullmatch(variable):
            raise ValueError(
                f"header {name!r}: {variable!r} is not an environment variable name; "
                "name the variable that holds the value (letters, digits and _)"
            )
    return dict(headers)


def check_header_value(header: str, variable: str, value: str) -> None:
    """Refuse a secret header value read from `variable`; the message never shows the value."""
    if not _visible(value):
        raise ValueError(
            f"the environment variable {variable} (sent as header {header!r}) holds a line "
            "break, a control or a non-ASCII character; set it to the plain value"
        )


def check_query_params(params: Mapping[str, str]) -> dict[str, str]:
    """`query_params` as given; names and values may not hold line breaks or invisible
    characters (the encoding keeps every other character inside the query)."""
    for name, value in params.items():
        for text, what in ((name, "name"), (value, f"value of {name!r}")):
            if not text.isprintable():
                raise ValueError(
                    f"the query parameter {what} holds a line break or an invisible "
                    "character; use visible characters only"
                )
        if not name:
            raise ValueError("a query parameter has an empty name; name each parameter")
        if _names_a_credential(name):
            raise ValueError(
                f"query parameter {name!r} carries a credential, which a config file must not "
                "hold (the query is journaled with every run); send it as a header read from "
                f'an environment variable: env_http_headers = {{ "{name}" = "VARIABLE" }}'
            )
    return dict(params)


def allowed_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """`headers` less any corral sets itself, whatever their case: settings copied in code skip
    validation, and a second `authorization` would be sent next to corral's."""
    return {name: value for name, value in headers.items() if name.lower() not in _RESERVED}


def encode_query(params: Mapping[str, str]) -> str:
    """`?name=value&...` with every reserved character percent-encoded (`/`, `?`, `#`, `&`,
    `=` included), so no parameter can move the path, the host or another parameter; "" if
    there are none."""
    if not params:
        return ""
    pairs = (f"{quote(name, safe='')}={quote(value, safe='')}" for name, value in params.items())
    return "?" + "&".join(pairs)


def _check_names(headers: Mapping[str, str]) -> None:
    seen: set[str] = set()
    for name in headers:
        if not _TOKEN.fullmatch(name):
            raise ValueError(
                f"header name {name!r} is not a valid HTTP header name (letters, digits and "
                "-, no spaces, line breaks or other characters)"
            )
        lower = name.lower()
        if lower.endswith("authorization"):
            raise ValueError(
                f"header {name!r} is corral's: the key goes as Authorization: Bearer from "
                'env_key; set env_key = "VARIABLE" instead (Azure also reads an api-key '
                'header: env_http_headers = { "api-key" = "VARIABLE" })'
            )
        if lower in _RESERVED:
            raise ValueError(
                f"header {name!r} is set by corral itself (it frames the request) and cannot "
                "be changed; remove it"
            )
        if lower in seen:
            raise ValueError(f"header {name!r} is given twice (names ignore case); keep one")
        seen.add(lower)


def _names_a_credential(name: str) -> bool:
    lower = name.lower()
    letters = _PARTS.sub("", lower)
    if any(word in letters for word in _SECRET_WORDS):
        return True
    return any(part in _SECRET_PARTS for part in _PARTS.split(lower))


def _visible(value: str) -> bool:
    return all(" " <= char <= "~" or char == "\t" for char in value)


QueryParams = Annotated[dict[str, str], AfterValidator(check_query_params)]
"""A provider's query parameters, checked (the config's table and a spec's settings alike)."""
Headers = Annotated[dict[str, str], AfterValidator(check_headers)]
"""A provider's plain headers, checked: no credentials, nothing that frames the request."""
EnvHeaders = Annotated[dict[str, str], AfterValidator(check_env_headers)]
"""Header name -> environment variable, checked."""
