"""The environment a command starts with: a short allow-list of the host's, plus fixed values.

Secrets in the host environment (API keys, tokens) never reach a command: only the names in
`HOST_ALLOW_LIST` are copied. The fixed values are Codex's (no colours, no pagers, UTF-8) so
that output stays plain text for the model.
"""

from __future__ import annotations

from collections.abc import Mapping

HOST_ALLOW_LIST = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "TZ")
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
FIXED_ENV: Mapping[str, str] = {
    "NO_COLOR": "1",
    "TERM": "dumb",
    "LANG": "C.UTF-8",
    "LC_CTYPE": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "COLORTERM": "",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GH_PAGER": "cat",
}


def command_environment(
    host: Mapping[str, str], extra: Mapping[str, str], *, sandboxed: bool, network: bool
) -> dict[str, str]:
    """The allow-listed host variables, the fixed ones, the caller's, then the sandbox markers."""
    env = {name: host[name] for name in HOST_ALLOW_LIST if name in host}
    env.setdefault("PATH", DEFAULT_PATH)
    env.update(FIXED_ENV)
    env.update(extra)
    if sandboxed:
        env["CORRAL_SANDBOX"] = "1"
        if not network:
            env["CORRAL_SANDBOX_NETWORK_DISABLED"] = "1"
    return env
