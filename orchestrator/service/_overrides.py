"""Which config keys an API request may change, and which keys it did change.

A request's `-c` overrides and its `model`, `api`, `base_url` and `sandbox` fields go through
the loader the CLI uses; what they changed is found by comparing the run's config with the one
the server would have used without them (`changed_keys`), so no spelling of a key (a quoted
name, an inline table, Codex's `[sandbox_workspace_write]`) slips past. Each changed key is then
classified by `classify`: safe keys apply as given, guarded keys only within a `[service]`
allowance (`_policy` checks their values), and every other key is refused, so a key added to the
config later is refused until someone classifies it here.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final, Literal

from corral.agents import CorralConfig

Key = tuple[str, ...]
Guard = Literal["sandbox", "approval", "network", "writable_roots", "mcp", "base_url"]
Verdict = Literal["safe", "never", "unclassified"] | Guard

ANY: Final = "*"
"""A pattern part matching any name (a table of your own naming: a role, a model, an endpoint)."""
SANDBOX_TABLE: Final = "sandbox_workspace_write"
BELOW: Final = "**"
"""A last pattern part matching the whole table below it."""

_SAFE_KEYS = """
model model_provider_api model_reasoning_effort
request_max_retries stream_max_retries stream_idle_timeout_ms
request_retry_deadline_sec request_backoff_initial_ms
model_context_window model_auto_compact_token_limit tool_output_token_limit
personality base_instructions developer_instructions user_instructions
project_doc_max_bytes project_doc_fallback_filenames environment instructions_max_tokens
tool_search_threshold skills.enabled
shell.default_timeout_ms shell.max_timeout_ms shell.output_max_tokens shell.approval_timeout_sec
shell.unified_exec web_search
agents.max_depth agents.max_threads agents.max_queued_spawns agents.fanout_concurrency
agents.roles.*.description agents.roles.*.instructions agents.roles.*.model
budgets.** prices.** rate_limits.** compaction.** journal.max_tool_output_bytes
"""
SAFE: Final[frozenset[Key]] = frozenset(tuple(dotted.split(".")) for dotted in _SAFE_KEYS.split())
"""Keys that change what a run costs, how it talks to the model and what it is told; none of
them changes what the run may touch on the server or where its key goes."""

GUARDED: Final[Mapping[Key, Guard]] = {
    ("sandbox_mode",): "sandbox",
    ("agents", "roles", ANY, "sandbox_mode"): "sandbox",
    ("approval_policy",): "approval",
    ("network_access",): "network",
    ("network", "allowed_domains"): "network",
    ("network", "denied_domains"): "network",
    ("writable_roots",): "writable_roots",
    ("mcp_servers", BELOW): "mcp",
    ("base_url",): "base_url",
    ("key_endpoints",): "base_url",
}
"""Keys a request may change within a `[service]` allowance."""

NEVER: Final[Mapping[Key, str]] = {
    ("model_api_key_env",): "it would send another of the server's variables as the key",
    ("model_instructions_file",): "it reads a file on the server",
    ("agents", "roles", ANY, "instructions_file"): "it reads a file on the server",
    ("skills", "dirs"): "it reads folders on the server",
    ("skills", "config"): "it turns on skills the server's config turned off",
    ("otel", BELOW): "it sends telemetry to an endpoint of the request's choosing",
    ("service", BELOW): "it is the server's own setting",
    ("temporal", BELOW): "it is the server's own setting",
    ("executor",): "it is the server's own setting",
    ("home",): "it is the server's own setting",
    ("projects", BELOW): "it says which projects the server trusts",
    ("project_root_markers",): "it moves where project config is looked for",
    ("hooks", BELOW): "hooks run commands on the server",
    ("model_provider",): "it picks the endpoint the server's key goes to",
    ("model_providers", BELOW): "it names endpoints and key variables on the server",
    ("profile",): "it picks one of the server's own profiles",
    ("profiles", BELOW): "it is the server's own setting",
    ("shell_environment_policy", BELOW): "it sets variables in commands run on the server",
    ("memories", BELOW): "it reads and writes the memories in the server's journal",
    ("journal", "url"): "it points the server's journal at another database",
    ("agents", "fanout_heartbeat_timeout_sec"): "it is the server's own setting",
}
"""Keys no request may change, with the reason the refusal gives."""


def classify(key: Key) -> Verdict:
    """What a request changing `key` needs: nothing (`safe`), an allowance, or is refused."""
    if any(_matches(pattern, key) for pattern in SAFE):
        return "safe"
    for pattern, guard in GUARDED.items():
        if _matches(pattern, key):
            return guard
    if any(_matches(pattern, key) for pattern in NEVER):
        return "never"
    return "unclassified"


def never_reason(key: Key) -> str:
    """Why `key` is refused (a key nobody classified: because it is not known to be safe)."""
    for pattern, reason in NEVER.items():
        if _matches(pattern, key):
            return reason
    return "it is not among the keys a request may set"


def named_keys(settings: Iterable[str]) -> Iterator[Key]:
    """The leaf keys `-c KEY=VALUE` settings name, read before any is applied, so a key no
    request may set is refused before the loader acts on it (it reads some files at once)."""
    for setting in settings:
        key_text, _, value_text = setting.partition("=")
        try:
            node: Any = tomllib.loads(f"{key_text} = 0")
            value: Any = tomllib.loads(f"value = {value_text}")["value"]
        except tomllib.TOMLDecodeError:
            value = None  # a plain string, or a bad key the loader reports with its origin
            node = {}
        key: Key = ()
        while isinstance(node, dict) and len(node) == 1:
            ((name, node),) = node.items()
            key = (*key, name)
        if key[:1] == (SANDBOX_TABLE,):  # Codex's spelling of two top-level keys
            key = key[1:]
        yield from (leaf for leaf in _leaves(value, key) if leaf)


def changed_keys(before: CorralConfig, after: CorralConfig) -> list[Key]:
    """Every leaf key whose value differs between the two configs, in schema order."""
    old, new = before.model_dump(mode="json"), after.model_dump(mode="json")
    return list(_changed(old, new, ()))


def leaf_value(config: CorralConfig, key: Key) -> Any:
    """The value at `key` in `config`'s JSON form (None where it has none)."""
    node: Any = config.model_dump(mode="json")
    for part in key:
        node = node.get(part) if isinstance(node, dict) else None
    return node


def _changed(old: Any, new: Any, key: Key) -> Iterator[Key]:
    # A table one side lacks is compared key by key with an empty one, so a new role or
    # server shows the keys it sets, not the unset (None) ones that grant nothing.
    old_table = old if isinstance(old, dict) else {}
    new_table = new if isinstance(new, dict) else {}
    if old_table or new_table:
        for name in {**old_table, **new_table}:
            yield from _changed(old_table.get(name), new_table.get(name), (*key, name))
    elif old != new:
        yield key


def _leaves(value: Any, key: Key) -> Iterator[Key]:
    if isinstance(value, dict) and value:
        for name, child in value.items():
            yield from _leaves(child, (*key, name))
    else:
        yield key


def _matches(pattern: Key, key: Key) -> bool:
    if pattern and pattern[-1] == BELOW:
        head = pattern[:-1]
        return len(key) > len(head) and _matches(head, key[: len(head)])
    same_length = len(pattern) == len(key)
    return same_length and all(p in (ANY, k) for p, k in zip(pattern, key, strict=True))
