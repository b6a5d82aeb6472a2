"""Codex's own `config.toml` keys: which corral reads with Codex's meaning, and which it skips.

A Codex config placed as `$CORRAL_HOME/config.toml` or `.corral/config.toml` must not stop a
run: every key Codex documents that corral has no use for (its TUI, login, feature flags,
plugins, role tables...) is taken out of the layer before validation and named in one warning
line per file. Codex spellings of keys corral has (its `[otel]` exporter tables, `network_access
= "enabled"`, ...) are translated onto corral's keys here. Anything else that is not in the
schema is still an error, so a mistyped corral key is caught.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ._errors import ConfigError

Key = tuple[str, ...]
# Top-level keys Codex documents and corral does not read.
_IGNORED_TOP = """
    analytics apps approvals_reviewer background_terminal_max_timeout chatgpt_base_url
    check_for_update_on_startup cli_auth_credentials_store commit_attribution compact_prompt
    disable_paste_burst experimental_compact_prompt_file
    experimental_instructions_file experimental_resume experimental_use_freeform_apply_patch
    experimental_use_rmcp_client experimental_use_unified_exec_tool features feedback
    file_opener forced_chatgpt_workspace_id forced_login_method ghost_snapshot hide_agent_reasoning
    history include_apply_patch_tool include_environment_context
    include_permissions_instructions instructions js_repl_node_module_dirs js_repl_node_path
    log_dir marketplaces mcp_oauth_callback_port mcp_oauth_credentials_store
    model_catalog_json model_max_output_tokens model_personality model_reasoning_summary
    model_reasoning_summary_format model_supports_reasoning_summaries model_verbosity notice
    notify oss_provider permissions plan_mode_reasoning_effort plugins
    preferred_auth_method realtime review_model service_tier
    show_raw_agent_reasoning sqlite_home suppress_unstable_features_warning tools
    tools_view_image tools_web_search tui windows windows_wsl_setup_acknowledged
    zsh_path allow_login_shell
    apps_mcp_product_sku audio auto_review debug desktop experimental_realtime_start_instructions
    experimental_realtime_ws_backend_prompt experimental_realtime_ws_base_url
    experimental_realtime_ws_model experimental_realtime_ws_startup_context
    experimental_thread_config_endpoint experimental_thread_store include_apps_instructions
    include_collaboration_mode_instructions mcp_oauth_callback_url
    model_auto_compact_token_limit_scope tool_suggest
    disable_response_storage experimental_sandbox_command_assessment
    experimental_use_exec_command_tool include_plan_tool include_view_image_tool
    responses_originator_header_internal_override use_experimental_reasoning_summary
    use_experimental_streamable_shell_tool use_experimental_unified_exec_tool
"""
# The second block: keys of newer Codex releases; the third: keys older releases documented,
# still found in configs people copy (`disable_response_storage = true` above all).
IGNORED_TOP = frozenset(_IGNORED_TOP.split())
# Keys Codex documents inside tables corral also reads; "*" is any one name.
IGNORED_IN: Mapping[Key, frozenset[str]] = {
    ("agents",): frozenset(
        {"enabled", "job_max_runtime_seconds", "default_subagent_model", "interrupt_message"}
    ),
    ("otel",): frozenset({"log_user_prompt", "environment", "trace_exporter", "metrics_exporter"}),
    ("sandbox_workspace_write",): frozenset({"exclude_tmpdir_env_var", "exclude_slash_tmp"}),
    ("skills",): frozenset({"bundled"}),
    # corral's own `[memories]` keeps `enabled`; Codex's tuning of its memory pipeline is not ours.
    ("memories",): frozenset(
        {
            "generate_memories",
            "use_memories",
            "max_raw_memories_for_consolidation",
            "max_unused_days",
            "max_rollout_age_days",
            "max_rollouts_per_startup",
            "min_rollout_idle_hours",
            "extract_model",
            "consolidation_model",
            "no_memories_if_mcp_or_web_search",
            "dedicated_tools",
            "disable_on_external_context",
            "min_rate_limit_remaining_percent",
        }
    ),
    ("shell_environment_policy",): frozenset(
        {
            "inherit",
            "exclude",
            "include_only",
            "ignore_default_excludes",
            "experimental_use_profile",
        }
    ),
    ("mcp_servers", "*"): frozenset(
        {
            "scopes",
            "oauth_resource",
            "supports_parallel_tool_calls",
            "experimental_environment",
            "environment_id",
            "oauth",
            "name",  # Codex's legacy display name
            # Claude Code's `.mcp.json` field, copied into TOML: the keys present pick the
            # transport, as in Codex, which ignores it too.
            "type",
        }
    ),
}
# The keys of a `[model_providers.ID]` table corral reads; Codex's others are skipped.
PROVIDER_KEYS = frozenset(
    {"name", "base_url", "env_key", "wire_api", "query_params", "http_headers", "env_http_headers"}
)
# `[agents]` keys corral reads; another table under `[agents]` is a Codex role definition,
# which `_codex_roles` translates when the layer is read from a file.
_AGENT_KEYS = frozenset(
    {
        "max_depth",
        "max_threads",
        "max_queued_spawns",
        "fanout_concurrency",
        "fanout_heartbeat_timeout_sec",
        "roles",
    }
)


def strip_codex(values: dict[str, Any]) -> list[str]:
    """Take Codex-only keys out of `values` (in place) and translate Codex spellings;
    returns the dotted names of the keys taken out."""
    _translate_features(values)
    ignored = _translate_otel(values) + _strip_hooks(values) + _translate_approval(values)
    ignored += _strip_table(values, ())
    _translate(values)
    for name, profile in _tables(values.get("profiles")):
        ignored += [f"profiles.{name}.{key}" for key in strip_codex(profile)]
    return sorted(set(ignored))


def ignored_warning(source: str, ignored: list[str]) -> str:
    """The one line that names what a file's Codex keys corral skipped."""
    return f"{source}: ignored Codex settings corral does not use: {', '.join(ignored)}"


def _strip_table(values: dict[str, Any], prefix: Key) -> list[str]:
    ignored: list[str] = []
    for name in list(values):
        key = (*prefix, name)
        if _is_ignored(key, values[name]):
            del values[name]
            ignored.append(".".join(key))
        elif isinstance(values[name], dict) and prefix[:1] != ("profiles",):
            ignored += _strip_table(values[name], key)
    return ignored


def _is_ignored(key: Key, value: Any) -> bool:
    if len(key) == 1:
        return key[0] in IGNORED_TOP
    if key[0] == "agents" and len(key) == 2 and isinstance(value, dict):
        return key[1] not in _AGENT_KEYS  # Codex's `[agents.NAME]` role tables
    if key[0] == "model_providers" and len(key) == 3:
        return key[2] not in PROVIDER_KEYS
    return any(
        _matches(table, key[:-1]) and key[-1] in names for table, names in IGNORED_IN.items()
    )


def _translate(values: dict[str, Any]) -> None:
    _translate_permissions(values)
    if "openai_base_url" in values:  # Codex's endpoint for its built-in provider
        values.setdefault("base_url", values.pop("openai_base_url"))
    # Codex's network setting is spelled as a word in its permission profiles, and configs
    # written for it carry the word to the top-level key.
    sandbox = values.get("sandbox_workspace_write")
    for table in (values, sandbox if isinstance(sandbox, dict) else {}):
        network = table.get("network_access")
        if isinstance(network, str) and network.strip().lower() in _NETWORK_WORDS:
            table["network_access"] = _NETWORK_WORDS[network.strip().lower()]
    agents = values.get("agents")
    if isinstance(agents, dict) and "max_concurrent_threads_per_session" in agents:
        # Codex's newer name for the cap on agents running at once.
        threads = agents.pop("max_concurrent_threads_per_session")
        agents.setdefault("max_threads", threads)
    skills = values.get("skills")
    if isinstance(skills, dict) and "include_instructions" in skills:
        # Codex's switch for the skills listing in each turn, which is what `enabled` is.
        skills.setdefault("enabled", skills.pop("include_instructions"))
    for _, server in _tables(values.get("mcp_servers")):
        millis = server.pop("startup_timeout_ms", None)
        if isinstance(millis, int | float) and not isinstance(millis, bool):
            server.setdefault("startup_timeout_sec", millis / 1000)


# Codex's built-in permission profiles, as the `sandbox_mode` each stands for.
_BUILTIN_PERMISSIONS = {
    ":read-only": "read-only",
    ":workspace": "workspace-write",
    ":danger-full-access": "danger-full-access",
}


def _translate_permissions(values: dict[str, Any]) -> None:
    """`default_permissions` picks the sandbox in Codex, over `sandbox_mode`. Skipping it would
    run agents wider than a `:read-only` the user chose, so a built-in profile becomes
    `sandbox_mode` and one of the user's own `[permissions]` profiles, whose rules corral cannot
    follow, is refused."""
    if "default_permissions" not in values:
        return
    chosen = values.pop("default_permissions")
    mode = _BUILTIN_PERMISSIONS.get(chosen) if isinstance(chosen, str) else None
    if mode is None:
        raise ConfigError(
            f"default_permissions = {json.dumps(chosen)}: corral cannot follow the rules of "
            "Codex's [permissions] profiles; use :read-only, :workspace or "
            ":danger-full-access, or remove it and set sandbox_mode, writable_roots and "
            "network_access"
        )
    values["sandbox_mode"] = mode


def _translate_approval(values: dict[str, Any]) -> list[str]:
    """Codex's `approval_policy = { granular = {...} }` as the policy it amounts to for commands:
    with `sandbox_approval` a command may ask to leave the sandbox (`on-request`); without, the
    request is refused unasked (`never`). Either way the sandbox holds; the other categories
    (rules, MCP elicitations, skills) are named as skipped."""
    policy = values.get("approval_policy")
    granular = policy.get("granular") if isinstance(policy, dict) and len(policy) == 1 else None
    if not isinstance(granular, dict):
        return []
    values["approval_policy"] = "on-request" if granular.get("sandbox_approval") else "never"
    prefix = "approval_policy.granular"
    return [f"{prefix}.{name}" for name in granular if name != "sandbox_approval"]


_NETWORK_WORDS = {"enabled": True, "disabled": False, "restricted": False}
# Codex's OTLP exporter tables, and the `protocol` corral speaks for each.
_OTLP_KINDS = {"otlp-http": "http/protobuf", "otlp-grpc": "grpc"}
_SIGNAL_PATHS = ("/v1/logs", "/v1/traces", "/v1/metrics")


def _translate_otel(values: dict[str, Any]) -> list[str]:
    """Codex's `exporter = { otlp-http = { endpoint, protocol, headers } }` (or `otlp-grpc`,
    or the same under `trace_exporter`, which corral prefers since it exports traces) becomes
    corral's `exporter = "otlp"`, `endpoint` and `protocol`; returns what it could not keep."""
    otel = values.get("otel")
    if not isinstance(otel, dict):
        return []
    ignored: list[str] = []
    if otel.get("exporter") == "statsig":  # Codex's own analytics backend
        otel["exporter"] = "none"
        ignored.append("otel.exporter")
    tables = {
        name: table
        for name in ("trace_exporter", "exporter")
        if (table := _otlp_table(otel.get(name))) is not None
    }
    for name in tables:
        del otel[name]
    for index, (name, (kind, settings)) in enumerate(tables.items()):
        if index > 0:
            ignored.append(f"otel.{name}")
            continue
        otel["exporter"], otel["protocol"] = "otlp", _OTLP_KINDS[kind]
        if "endpoint" in settings:  # a value that is no text is left for validation to report
            endpoint = settings.pop("endpoint")
            is_text = isinstance(endpoint, str)
            otel.setdefault("endpoint", _collector_base(endpoint, kind) if is_text else endpoint)
        if settings.pop("protocol", "binary") != "binary":  # corral sends protobuf only
            ignored.append(f"otel.{name}.{kind}.protocol")
        ignored += [f"otel.{name}.{kind}.{key}" for key in settings]
    return ignored


# Codex's feature flags and legacy `[tools]` switches that name a setting corral has.
_FEATURE_SETTINGS: Mapping[tuple[str, str], tuple[tuple[str, ...], Any]] = {
    ("features", "unified_exec"): (("shell", "unified_exec"), None),
    ("features", "web_search_request"): (("web_search",), "live"),
    ("features", "web_search_cached"): (("web_search",), "cached"),
    ("tools", "web_search"): (("web_search",), "live"),
}


# Codex switches that turn off a tool corral always offers: skipping one would hand agents a
# tool the user took away, so such a file is refused with what to do instead.
_TOOLS_TURNED_OFF: Mapping[tuple[str, ...], str] = {
    ("features", "shell_tool"): "the shell tool",
    # Skipped, these handed agents a tool the user had switched off: apply_patch writes files,
    # view_image sends a file's pixels to the model.
    ("include_apply_patch_tool",): "the apply_patch tool",
    ("tools_view_image",): "the view_image tool",
    ("include_view_image_tool",): "the view_image tool",
    ("tools", "view_image"): "the view_image tool",
    ("features", "view_image_tool"): "the view_image tool",
}


def _translate_features(values: dict[str, Any]) -> None:
    """`[features] unified_exec` is corral's `shell.unified_exec`; a web search flag that is on
    is `web_search` (`live`, or `cached`); a key set itself wins. A switch that turns off a
    tool corral always offers is refused. The rest of `[features]` and `[tools]` is skipped
    with the warning."""
    for path, tool in _TOOLS_TURNED_OFF.items():
        if _value_at(values, path) is False:
            raise ConfigError(
                f"{'.'.join(path)} = false turns off {tool}, which corral always offers (every "
                "command and file runs in the sandbox); to keep agents from changing files set "
                'sandbox_mode = "read-only", then delete this line'
            )
    for (table, flag), (key, word) in _FEATURE_SETTINGS.items():
        flags = values.get(table)
        if not isinstance(flags, dict) or not isinstance(flags.get(flag), bool):
            continue
        if word is not None and not flags[flag]:
            continue  # a search flag that is off: corral's default already
        value = flags.pop(flag)
        node = values
        for part in key[:-1]:
            child = node.setdefault(part, {})
            node = child if isinstance(child, dict) else {}
        node.setdefault(key[-1], value if word is None else word)
    for table in ("features", "tools"):
        if values.get(table) == {}:
            del values[table]


def _value_at(values: dict[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = values
    for part in path:
        node = node.get(part) if isinstance(node, dict) else None
    return node


# Keys of a Codex hook handler that only shape how Codex shows or schedules it: skipping them
# never lets a command run that Codex would not run (an `async` hook runs, and waits, here).
_HOOK_HANDLER_KEYS = ("async", "statusMessage", "commandWindows")


def _strip_hooks(values: dict[str, Any]) -> list[str]:
    """Codex's `[hooks.state."ID"]` entries and its handlers' display keys come out; an entry
    that turns a hook off is refused, since corral cannot tell which hook it means and running
    it anyway would run a command the user switched off."""
    hooks = values.get("hooks")
    if not isinstance(hooks, dict):
        return []
    ignored: list[str] = []
    state = hooks.pop("state", None)
    if state is not None:
        entries = state.items() if isinstance(state, dict) else ()
        off = [
            name
            for name, entry in entries
            if isinstance(entry, dict) and not entry.get("enabled", True)
        ]
        if off:
            raise ConfigError(
                f"hooks.state.{off[0]}: enabled = false turns off a Codex hook that corral "
                "cannot identify; delete that hook from [hooks] instead, then this entry"
            )
        ignored.append("hooks.state")
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else ():
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for handler in handlers if isinstance(handlers, list) else ():
                for key in _HOOK_HANDLER_KEYS:
                    if isinstance(handler, dict) and key in handler:
                        del handler[key]
                        ignored.append(f"hooks.{event}.hooks.{key}")
    return ignored


def _otlp_table(value: Any) -> tuple[str, dict[str, Any]] | None:
    if isinstance(value, dict) and len(value) == 1:
        ((kind, settings),) = value.items()
        if kind in _OTLP_KINDS and isinstance(settings, dict):
            return kind, dict(settings)
    return None


def _collector_base(endpoint: str, kind: str) -> str:
    # Codex names the signal's own URL (`.../v1/logs`); corral appends the signal's path itself.
    trimmed = endpoint.strip().rstrip("/")
    if kind == "otlp-http" and trimmed.endswith(_SIGNAL_PATHS):
        return trimmed.rsplit("/v1/", 1)[0]
    return trimmed


def _tables(value: Any) -> list[tuple[str, dict[str, Any]]]:
    if not isinstance(value, dict):
        return []
    return [(name, table) for name, table in value.items() if isinstance(table, dict)]


def _matches(pattern: Key, key: Key) -> bool:
    return len(pattern) == len(key) and all(
        p in ("*", k) for p, k in zip(pattern, key, strict=True)
    )
