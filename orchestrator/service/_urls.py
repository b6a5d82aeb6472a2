"""Model endpoint addresses as the API accepts them: checked, then reduced to one spelling.

A `base_url` must be a plain http(s) address with a host: no other scheme, no credentials, no
query or fragment, nothing that hides where it points. `normalise_base_url` answers the one
spelling that allow-lists are compared with (and that the run then uses), so two spellings of
the same endpoint match and no spelling of another endpoint does. Deciding which endpoints are
allowed is `_policy`'s job.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

OPENAI_BASE_URL = "https://api.openai.com/v1"
"""Where the openai SDK sends requests when no `base_url` is configured."""
_DEFAULT_PORTS = {"http": 80, "https": 443}
_HOST_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$")
_UNSAFE_CHARS = re.compile(r"[\x00-\x20\x7f\\]")
EXPECTED = "expected an http(s) endpoint such as https://api.openai.com/v1"


def normalise_base_url(text: str) -> str:
    """The one spelling of the endpoint `text` names; `ValueError` saying what is wrong."""
    shown = repr(text[:200])
    if _UNSAFE_CHARS.search(text):
        raise ValueError(
            f"base_url {shown} contains spaces, control characters or '\\'; {EXPECTED}"
        )
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        named = f"scheme {scheme!r}" if scheme else "no scheme"
        raise ValueError(f"base_url {shown} has {named}; {EXPECTED}")
    if "@" in parts.netloc:
        raise ValueError(
            f"base_url {shown} carries credentials; the server sends its own key, so give the "
            "address alone"
        )
    if parts.query or parts.fragment or text.rstrip().endswith(("?", "#")):
        raise ValueError(f"base_url {shown} has a query or fragment; {EXPECTED}")
    host = _host(parts.hostname or "", shown)
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"base_url {shown} has an invalid port; {EXPECTED}") from None
    netloc = host if port is None or port == _DEFAULT_PORTS[scheme] else f"{host}:{port}"
    return f"{scheme}://{netloc}{parts.path.rstrip('/')}"


def _host(host: str, shown: str) -> str:
    if not host:
        raise ValueError(f"base_url {shown} has no host; {EXPECTED}")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        if not _HOST_NAME.match(host):
            raise ValueError(f"base_url {shown} has an invalid host name; {EXPECTED}") from None
        return host
    return f"[{address.compressed}]" if address.version == 6 else address.compressed
