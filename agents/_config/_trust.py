"""Project trust: which keys of a project's `.corral/config.toml` apply.

A project file sits in the workspace, so an agent may have written it. In a project the user has
not trusted, only keys on an explicit allow-list apply (`SAFE_KEYS`, and `CHECKED_KEYS` when their
paths stay in the project); every other key of the schema, including any added to it later, widens
what agents may do and is ignored with one warning. Trust lives only in the user's own file, as
Codex writes it (`[projects."/folder"] trust_level = "trusted"`), with the fingerprint of the
widening keys `corral trust` saw (`trusted_hash`): a key changed since is ignored until the project
is trusted again. Writing those entries is `_trust_file`'s job.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ._schema_keys import field_names
from ._sources import ConfigLayer, Key

logger = logging.getLogger("corral.config")

PROJECTS_TABLE = "projects"
TRUSTED = "trusted"
# Dotted keys that apply from any project; "*" stands for any one name (a role, a model).
# A table listed here applies whole. Anything not listed here or in CHECKED_KEYS is ignored.
SAFE_KEYS = frozenset(
    {
        "model",
        "model_provider_api",  # the wire format only: the endpoint and the key stay the user's
        "request_max_retries",
        "request_retry_deadline_sec",
        "request_backoff_initial_ms",
        "stream_max_retries",
        "stream_idle_timeout_ms",
        "model_context_window",
        "model_auto_compact_token_limit",
        "tool_output_token_limit",
        "personality",
        "model_reasoning_effort",
        "base_instructions",
        "developer_instructions",
        "user_instructions",
        "project_doc_max_bytes",
        # Both only change what the agent is told, which a project may already do through
        # `developer_instructions`: `environment` picks AGENTS.md blocks, the cap refuses
        # instructions that are too long (enforcement never reads either).
        "environment",
        "instructions_max_tokens",
        "tool_search_threshold",
        # Named one by one: a key added to [shell] later (an environment policy, say) must not
        # apply from an untrusted project just because its table did.
        "shell.default_timeout_ms",
        "shell.max_timeout_ms",
        "shell.output_max_tokens",
        "shell.approval_timeout_sec",
        "rate_limits",
        "compaction",
        "journal.max_tool_output_bytes",
        "agents.max_depth",
        "agents.max_threads",
        "agents.max_queued_spawns",
        "agents.fanout_concurrency",
        "agents.roles.*.description",
        "agents.roles.*.instructions",
        "agents.roles.*.model",
        "skills.enabled",
    }
)
# What the filter never applies from an untrusted project, named so that a test can prove every
# key of the schema is classified. The filter itself only reads the allow-lists.
WIDENING_KEYS = frozenset(
    {
        "base_url",
        "model_api_key_env",
        "sandbox_mode",
        "approval_policy",
        "network_access",
        # Denied domains guard the user as much as allowed ones widen: a project may not touch
        # either list.
        "network",
        "writable_roots",
        "project_root_markers",
        "mcp_servers",
        "otel",
        "service",
        "executor",
        "temporal",
        "home",
        "projects",
        "key_endpoints",
        # A project that raised the user's budgets or zeroed the prices would defeat the one
        # control that bounds what a run costs.
        "budgets",
        "prices",
        "agents.roles.*.sandbox_mode",
        # Hooks run commands, some of them outside the sandbox.
        "hooks",
        # Commands that outlive their call: a project file an agent may have written must not
        # turn them on.
        "shell.unified_exec",
        "web_search",  # reaches the web, like network_access
        # Codex's spellings of an endpoint and its key variable, and named sets of any keys.
        "model_provider",
        "model_providers",
        "profile",
        "profiles",
        # Variables such as LD_PRELOAD or PATH change what every command runs.
        "shell_environment_policy",
        # Memory is written to the user's journal and read back into prompts: a project may
        # turn it off (`memories.enabled` is checked) but never size, time or scope it.
        "memories.max_per_project",
        "memories.consolidate_every",
        "memories.extraction_timeout_sec",
        "memories.excluded_projects",
        # Where every run's journal goes: a project must not send it to a database of its own.
        "journal.url",
        # How long a wedged worker process may hold its items (and its share of the rate limits)
        # before it is killed: a project must not switch off that watch, nor have healthy
        # workers killed over and over.
        "agents.fanout_heartbeat_timeout_sec",
        # Arrays replace: a project's list would switch back on the skills the user turned off.
        "skills.config",
    }
)
Verdict = Literal["trusted", "untrusted", "changed"]


@dataclass(frozen=True)
class ProjectVerdict:
    """What became of one project file: its folder (the trust key), the fingerprint of its
    widening keys, whether they applied, and the dotted names of those that did not."""

    file: Path
    folder: Path
    fingerprint: str
    verdict: Verdict
    ignored: tuple[str, ...]


def project_folder(config_file: Path) -> Path:
    """The folder trust is keyed by: the one holding `.corral/`, symlinks resolved."""
    return config_file.parent.parent.resolve()


def judge_project(
    layer: ConfigLayer, user: ConfigLayer | None, home: Path
) -> tuple[ConfigLayer, ProjectVerdict]:
    """The project layer as it applies, and the verdict; warns once about ignored keys."""
    assert layer.path is not None
    folder = project_folder(layer.path)
    safe, widening = split_widening(layer.values, folder, home.resolve())
    fingerprint = fingerprint_of(layer.path, widening)
    verdict = verdict_of(trust_entry(user, folder), fingerprint)
    applied = dict(layer.values) if verdict == TRUSTED else safe
    applied.pop(PROJECTS_TABLE, None)  # a project never speaks for trust, trusted or not
    ignored = tuple(_names(widening)) if verdict != TRUSTED else ()
    result = ProjectVerdict(layer.path, folder, fingerprint, verdict, ignored)
    if ignored:
        logger.warning(_warning(result))
    filtered = ConfigLayer(layer.kind, layer.source, applied, layer.labels, layer.path)
    return filtered, result


def trust_entry(user: ConfigLayer | None, folder: Path) -> Mapping[str, Any] | None:
    """The user file's `[projects."..."]` entry for `folder`, its key resolved like `folder`."""
    table = user.values.get(PROJECTS_TABLE) if user else None
    if not isinstance(table, Mapping):
        return None
    for name, entry in table.items():
        if isinstance(entry, Mapping) and Path(name).expanduser().resolve() == folder:
            return entry
    return None


def project_fingerprint(layer: ConfigLayer, home: Path) -> str:
    """The fingerprint of a project layer's widening keys, as `corral trust` records it."""
    assert layer.path is not None
    folder = project_folder(layer.path)
    return fingerprint_of(layer.path, split_widening(layer.values, folder, home.resolve())[1])


def split_widening(
    values: Mapping[str, Any], folder: Path, home: Path
) -> tuple[dict[str, Any], dict[str, Any]]:
    """`values` split into the keys that apply in any project and those that widen power."""
    safe: dict[str, Any] = {}
    widening: dict[str, Any] = {}
    _split(values, (), folder, home, safe, widening)
    return safe, widening


def fingerprint_of(config_file: Path, widening: Mapping[str, Any]) -> str:
    """A hash of the widening keys and of the file they came from (symlinks resolved)."""
    payload = {"file": str(config_file.resolve()), "keys": widening}
    text = json.dumps(payload, sort_keys=True, default=str, ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def verdict_of(entry: Mapping[str, Any] | None, fingerprint: str) -> Verdict:
    """What a user-file entry says of a project whose widening keys hash to `fingerprint`."""
    if entry is None or entry.get("trust_level") != TRUSTED:
        return "untrusted"
    recorded = entry.get("trusted_hash")
    # An entry without a fingerprint is Codex's own: it trusts the project as it stands.
    return "trusted" if recorded is None or recorded == fingerprint else "changed"


def _split(
    values: Mapping[str, Any],
    prefix: Key,
    folder: Path,
    home: Path,
    safe: dict[str, Any],
    widening: dict[str, Any],
) -> None:
    for name, value in values.items():
        key = (*prefix, name)
        kind = _kind(key, value, folder, home)
        if kind == "table":
            inner_safe: dict[str, Any] = {}
            inner_wide: dict[str, Any] = {}
            _split(value, key, folder, home, inner_safe, inner_wide)
            if inner_safe:
                safe[name] = inner_safe
            if inner_wide:
                widening[name] = inner_wide
        elif kind == "safe":
            safe[name] = value
        else:
            widening[name] = value


def _kind(key: Key, value: Any, folder: Path, home: Path) -> Literal["safe", "table", "widening"]:
    if any(_matches(pattern[: len(key)], key) for pattern in _SAFE if len(pattern) <= len(key)):
        return "safe"
    check = next((c for p, c in _CHECKED.items() if _matches(p, key)), None)
    if check is not None:
        return "safe" if check(value, folder, home) else "widening"
    below = (*_SAFE, *_CHECKED)
    if isinstance(value, Mapping) and any(
        len(p) > len(key) and _matches(p[: len(key)], key) for p in below
    ):
        return "table"
    allowed = field_names(key[:-1])
    if allowed is not None and key[-1] not in allowed:
        return "safe"  # not in the schema at all: validation reports it with its file
    return "widening"


def _matches(pattern: Key, key: Key) -> bool:
    return len(pattern) == len(key) and all(
        p in ("*", k) for p, k in zip(pattern, key, strict=True)
    )


def _inside(value: Any, folder: Path, home: Path) -> bool:
    if not isinstance(value, str):
        return True  # the wrong type: validation reports it
    path = Path(value).resolve()
    return path.is_relative_to(folder) and not path.is_relative_to(home)


def _all_inside(value: Any, folder: Path, home: Path) -> bool:
    return not isinstance(value, list) or all(_inside(v, folder, home) for v in value)


def _turned_off(value: Any, folder: Path, home: Path) -> bool:
    """Only `false`: a project may opt out of memory, never turn it on for itself."""
    return value is False


def _plain_names(value: Any, folder: Path, home: Path) -> bool:
    """File names only: a path would make AGENTS.md discovery read any file on the host."""
    if not isinstance(value, list):
        return True
    return all(
        isinstance(v, str) and v not in ("", ".", "..") and Path(v).name == v and "\\" not in v
        for v in value
    )


Check = Callable[[Any, Path, Path], bool]
# Keys that apply from an untrusted project only when what they point at stays in the project
# (and out of `$CORRAL_HOME`): they read a file into what the agent sees.
CHECKED_KEYS: Mapping[str, Check] = {
    "model_instructions_file": _inside,
    "agents.roles.*.instructions_file": _inside,
    "skills.dirs": _all_inside,
    "project_doc_fallback_filenames": _plain_names,
    "memories.enabled": _turned_off,
}
CHECK_WORDS: Mapping[str, str] = {"memories.enabled": "only `false`"}
"""How the reference page names a check that is not about paths."""
_SAFE = tuple(tuple(k.split(".")) for k in SAFE_KEYS)
_CHECKED = {tuple(k.split(".")): check for k, check in CHECKED_KEYS.items()}


def _names(widening: Mapping[str, Any], prefix: str = "") -> list[str]:
    names: list[str] = []
    for name, value in widening.items():
        dotted = f"{prefix}{name}"
        below = _is_partial(dotted) and isinstance(value, Mapping)
        names += _names(value, dotted + ".") if below else [dotted]
    return names


def _is_partial(dotted: str) -> bool:
    """Whether the table at `dotted` was split (some of it applies), so its keys are named."""
    key = tuple(dotted.split("."))
    patterns = (*_SAFE, *_CHECKED)
    return any(len(p) > len(key) and _matches(p[: len(key)], key) for p in patterns)


def _warning(verdict: ProjectVerdict) -> str:
    names = ", ".join(verdict.ignored)
    if verdict.verdict == "changed":
        why = "they changed since you trusted this project"
        fix = f"review them, then run `corral trust {verdict.folder}` again"
    else:
        why = "the project is not trusted and these keys widen what agents may do"
        fix = f"if you wrote them, run `corral trust {verdict.folder}`"
    return f"{verdict.file}: ignored {names}: {why}; {fix}"
