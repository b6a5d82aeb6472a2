"""The shape of corral's configuration: one frozen pydantic model per TOML table.

Key names follow Codex's `config.toml` where Codex has them; the Codex keys corral has no use
for are taken out before validation (`_codex`). Every model forbids unknown keys so typos
surface; reading, layering and error messages are `_load`'s job. A new `[section]` is a new
`_Section` subclass and one field on `CorralConfig`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from corral.tools import (
    APPROVAL_TIMEOUT,
    ApprovalPolicy,
    HooksConfig,
    SandboxMode,
    check_domain_patterns,
)

from ._provider_model import ModelProviderConfig as ModelProviderConfig
from ._role_model import BUILTIN_ROLES as BUILTIN_ROLES
from ._role_model import MAX_ROLES
from ._role_model import ROLE_NAME as ROLE_NAME
from ._role_model import RoleConfig as RoleConfig
from ._skills_model import SkillsConfig as SkillsConfig
from ._skills_model import SkillToggle as SkillToggle

# Codex compacts at 90% of the window; a configured limit can only lower that.
AUTO_COMPACT_PERCENT = 90
ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]
DEFAULT_ROOT_MARKERS = (".git",)
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class ShellConfig(_Section):
    """`[shell]`: limits of the shell tool."""

    default_timeout_ms: int = Field(default=10_000, ge=1)
    max_timeout_ms: int = Field(default=600_000, ge=1)
    output_max_tokens: int = Field(default=10_000, ge=1)
    """What one command's output may take in the tool answer (head and tail are kept)."""
    approval_timeout_sec: float = Field(default=APPROVAL_TIMEOUT, gt=0)
    """How long a command waits for an approval; silence past it counts as a denial."""
    unified_exec: bool = False
    """Also offer `exec_command` and `write_stdin` (commands that keep running between calls,
    in the same sandbox); Codex's `unified_exec`. Off by default."""

    @model_validator(mode="after")
    def _default_within_max(self) -> ShellConfig:
        if self.default_timeout_ms > self.max_timeout_ms:
            raise ValueError(
                f"default_timeout_ms ({self.default_timeout_ms}) is above max_timeout_ms "
                f"({self.max_timeout_ms}); lower it or raise max_timeout_ms"
            )
        return self


class ShellEnvironmentPolicy(_Section):
    """`[shell_environment_policy]`, Codex's table: `set` adds variables to every command.

    Commands always start from the sandbox's short allow-list of this process's variables
    (PATH, HOME, USER, LOGNAME, SHELL, TZ), never its whole environment, so Codex's `inherit`,
    `exclude`, `include_only` and `ignore_default_excludes` are skipped with a warning.
    """

    set: dict[str, str] = {}

    @field_validator("set")
    @classmethod
    def _variable_names(cls, values: dict[str, str]) -> dict[str, str]:
        for name, value in values.items():
            if not _ENV_NAME.fullmatch(name):
                raise ValueError(f"{name!r} is not a variable name; use letters, digits and _")
            if "\0" in value:
                raise ValueError(f"the value of {name} holds a NUL byte")
        return values


class AgentsConfig(_Section):
    """`[agents]`: how deep and how wide a run may grow (Codex's `max_depth`, `max_threads`),
    how many fan-out workers run at once, and roles of your own."""

    max_depth: int = Field(default=1, ge=1)
    max_threads: int = Field(default=6, ge=1)
    max_queued_spawns: int = Field(default=64, ge=0)
    """Spawns past `max_threads` that wait for a slot, per supervisor; past them, refused."""
    fanout_concurrency: int = Field(default=16, ge=1)
    fanout_heartbeat_timeout_sec: float = Field(default=30.0, ge=1.0, le=3600.0)
    """How long a fan-out's worker process (`--processes`) may go without a word to its parent
    before it is killed and its items are dealt again; it beats six times in that span."""
    roles: dict[str, RoleConfig] = {}

    @field_validator("roles")
    @classmethod
    def _role_names(cls, roles: dict[str, RoleConfig]) -> dict[str, RoleConfig]:
        if len(roles) > MAX_ROLES:
            raise ValueError(f"{len(roles)} roles; at most {MAX_ROLES} may be defined, remove some")
        for name in roles:
            if name in BUILTIN_ROLES:
                raise ValueError(f"{name!r} is a built-in role; give your role another name")
            if not ROLE_NAME.fullmatch(name):
                raise ValueError(
                    f"role name {name[:60]!r} is not allowed; use 1-40 lower-case letters, "
                    "digits, _ and -, starting with a letter"
                )
        return roles


class BudgetConfig(_Section):
    """`[budgets]`: per-agent limits (`max_*`) and per-run limits (`run_max_*`); unset is none.
    Cost budgets are checked before each model request too, with its estimated input cost."""

    max_tokens: int | None = Field(default=None, ge=1)
    max_cost_usd: float | None = Field(default=None, gt=0)
    max_wall_time_s: float | None = Field(default=None, gt=0)
    max_tool_calls: int | None = Field(default=None, ge=1)
    max_turns: int | None = Field(default=None, ge=1)
    max_cost_growth: float | None = Field(default=None, gt=1)
    """Stop an agent whose turn costs more than this many times the mean of its first
    `cost_growth_baseline_turns` turns (USD at its price; tokens for a model without one)."""
    cost_growth_baseline_turns: int = Field(default=3, ge=1)
    run_max_tokens: int | None = Field(default=None, ge=1)
    run_max_cost_usd: float | None = Field(default=None, gt=0)
    run_max_wall_time_s: float | None = Field(default=None, gt=0)
    run_max_tool_calls: int | None = Field(default=None, ge=1)
    run_max_turns: int | None = Field(default=None, ge=1)


class ModelPrice(_Section):
    """`[prices."MODEL"]`: USD per million tokens. Cached input unset bills as plain input."""

    input_per_mtok: float = Field(ge=0)
    cached_input_per_mtok: float | None = Field(default=None, ge=0)
    output_per_mtok: float = Field(ge=0)


class RateLimit(_Section):
    """`[rate_limits."BASE_URL"]` or `[rate_limits.default]`: one endpoint's limits; unset: none."""

    requests_per_minute: int | None = Field(default=None, ge=1)
    tokens_per_minute: int | None = Field(default=None, ge=1)
    max_concurrency: int | None = Field(default=None, ge=1)


McpApprovalMode = Literal["auto", "prompt", "approve"]
"""Codex's approval modes for MCP tools: `auto` follows the tool's annotations and the approval
policy, `prompt` always asks, `approve` never asks."""


class McpToolConfig(_Section):
    """`[mcp_servers.NAME.tools.TOOL]`: settings of one tool of a server."""

    approval_mode: McpApprovalMode | None = None
    """Overrides the server's `default_tools_approval_mode` for this tool."""


class McpServerConfig(_Section):
    """`[mcp_servers.NAME]`, with Codex's keys: `command` for stdio, or `url` for streamable HTTP.

    Secrets stay out of the file: `bearer_token_env_var` and `env_http_headers` name environment
    variables to read at connect time. `headers` is accepted as a spelling of `http_headers`.
    """

    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = {}
    env_vars: tuple[str, ...] = ()
    cwd: Path | None = None
    url: str | None = None
    http_headers: dict[str, str] = Field(
        default={}, validation_alias=AliasChoices("http_headers", "headers")
    )
    env_http_headers: dict[str, str] = {}
    bearer_token_env_var: str | None = None
    startup_timeout_sec: float = Field(default=30.0, gt=0)
    tool_timeout_sec: float = Field(default=120.0, gt=0)
    enabled_tools: tuple[str, ...] | None = None
    disabled_tools: tuple[str, ...] = ()
    enabled: bool = True
    required: bool = False
    default_tools_approval_mode: McpApprovalMode = "auto"
    tools: dict[str, McpToolConfig] = {}

    @field_validator("env_vars", mode="before")
    @classmethod
    def _codex_env_var_tables(cls, value: Any) -> Any:
        # Newer Codex also writes `{ name = "X", source = "local" }`; corral starts every
        # server on this machine, so only a local source can be honoured.
        if not isinstance(value, list | tuple):
            return value
        return [_env_var_name(entry) if isinstance(entry, dict) else entry for entry in value]

    def approval_mode(self, tool: str) -> McpApprovalMode:
        """The approval mode of `tool` (the server's own name for it)."""
        own = self.tools.get(tool)
        if own is not None and own.approval_mode is not None:
            return own.approval_mode
        return self.default_tools_approval_mode

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if self.command is not None and self.url is not None:
            raise ValueError(
                "both `command` and `url` are set; keep `command` for a stdio server "
                "or `url` for a streamable HTTP server"
            )
        if self.command is None and self.url is None:
            raise ValueError("set `command` (a stdio server) or `url` (a streamable HTTP server)")
        return self

    @property
    def transport(self) -> Literal["stdio", "streamable_http"]:
        return "stdio" if self.command is not None else "streamable_http"


def _env_var_name(entry: dict[str, Any]) -> Any:
    source = entry.get("source", "local")
    if source != "local":
        raise ValueError(
            f"the env_vars entry {entry.get('name')!r} has source = {source!r}; corral starts "
            'servers on this machine, so use source = "local" or leave it out'
        )
    return entry.get("name")


class NetworkConfig(_Section):
    """`[network]`: with `network_access = true`, setting either list restricts the network to
    host names: commands reach `allowed_domains` (Codex's patterns: `example.com`,
    `*.example.com` for subdomains, `**.example.com` for both, `*` for any name) minus
    `denied_domains`, only through corral's proxy. Unset lists: the network is not restricted."""

    allowed_domains: tuple[str, ...] | None = None
    denied_domains: tuple[str, ...] = ()

    @field_validator("allowed_domains", "denied_domains")
    @classmethod
    def _valid_patterns(
        cls, patterns: tuple[str, ...] | None, info: ValidationInfo
    ) -> tuple[str, ...] | None:
        if patterns is not None:
            check_domain_patterns(patterns, allow_any=info.field_name == "allowed_domains")
        return patterns


class CompactionConfig(_Section):
    """`[compaction]`: when agents summarise their history, and how many at once."""

    early_percent: int | None = Field(default=80, ge=1, le=100)
    """Start a summary in the background from this share of the window (unset: never early)."""
    max_concurrent: int = Field(default=4, ge=1)
    slot_wait_timeout_sec: float = Field(default=600.0, gt=0)


class MemoriesConfig(_Section):
    """`[memories]`: what agents remember across runs (see the memory page). Off by default.

    A project opts out with `enabled = false` in its own `.corral/config.toml` (that applies
    even from an untrusted project); turning memory on from a project needs the user's trust.
    """

    enabled: bool = False
    """Whether runs remember what they learn and recall it into later turns."""
    max_per_project: int = Field(default=500, ge=1, le=100_000)
    """Raw memories kept per project; past it the oldest are dropped."""
    consolidate_every: int = Field(default=10, ge=0)
    """Consolidate a project's memories after this many new raw ones (0: only by command)."""
    extraction_timeout_sec: float = Field(default=60.0, gt=0, le=3600)
    """How long a run's end may wait for its memories to be extracted (and consolidated)."""
    excluded_projects: tuple[Path, ...] = ()
    """Projects (repository roots) that never read or write memories."""


class OtelConfig(_Section):
    """`[otel]`: where traces and metrics go."""

    exporter: Literal["otlp", "console", "none"] = "none"
    endpoint: str | None = None
    protocol: Literal["http/protobuf", "grpc"] = "http/protobuf"
    service_name: str = "corral"


class ServiceConfig(_Section):
    """`[service]`: how `corral serve` runs; `on_restart` says what becomes of runs a stopped
    server left unfinished: carried on through the journal's resume, or marked interrupted.
    The allow-lists bound what an API request may ask for; their defaults are the safe ones."""

    max_running: int = Field(default=4, ge=1)
    max_queued: int = Field(default=16, ge=0)
    on_restart: Literal["resume", "interrupt"] = "resume"
    allowed_base_urls: tuple[str, ...] = ()
    """Endpoints a request may send the server's model key to, besides the one the server's
    own config names; compared exactly after normalising."""
    allowed_roots: tuple[Path, ...] = ()
    """Folders a request's `cd`, `repo` and writable roots may be in or under. Empty: only the
    server's working folder, and none when that is `/`, the home folder or above it."""
    max_sandbox: SandboxMode = SandboxMode.WORKSPACE_WRITE
    """The widest sandbox a request may run in; `full-access` only when set here."""
    allow_mcp_overrides: bool = False
    """Whether a request's config overrides may add or change `mcp_servers` (commands run on
    the server)."""
    allow_network: bool = False
    """Whether a request may turn `network_access` on."""

    @field_validator("allowed_roots")
    @classmethod
    def _absolute_roots(cls, roots: tuple[Path, ...]) -> tuple[Path, ...]:
        expanded = tuple(root.expanduser() for root in roots)
        for root in expanded:
            if not root.is_absolute():
                raise ValueError(f"allowed_roots entry {str(root)!r} is not an absolute path")
        return expanded

    @field_validator("max_sandbox", mode="before")
    @classmethod
    def _codex_sandbox_spelling(cls, value: Any) -> Any:
        return SandboxMode.FULL_ACCESS if value == "danger-full-access" else value


class TemporalConfig(_Section):
    """`[temporal]`: the Temporal server runs go to when `executor = "temporal"`, and the task
    queue its corral workers poll."""

    address: str = Field(default="127.0.0.1:7233", min_length=1)
    """HOST:PORT of the server's frontend."""
    namespace: str = Field(default="default", min_length=1)
    task_queue: str = Field(default="corral", min_length=1)
    payload_threshold_bytes: int = Field(default=256 * 1024, ge=1024, le=2 * 1024 * 1024)
    """Payloads this large or larger travel by reference (a blob under `$CORRAL_HOME/blobs`);
    Temporal itself refuses payloads of 2 MiB."""


class ProjectTrust(_Section):
    """`[projects."/abs/path"]` in the user's own config, as Codex writes it: whether the project
    whose `.corral/` sits in that folder may widen power, and (written by `corral trust`) the
    fingerprint of the widening keys it was trusted with."""

    trust_level: Literal["trusted", "untrusted"]
    trusted_hash: str | None = None


class JournalConfig(_Section):
    """`[journal]`: what the journal keeps. Of each tool output, the text the model sees (at
    most `max_tool_output_bytes`), its full size and a sha256 of it, once."""

    max_tool_output_bytes: int = Field(default=4 * 1024 * 1024, ge=1024, le=64 * 1024 * 1024)
    url: str | None = None
    """Where the journal lives, when not in `$CORRAL_HOME/journal.sqlite`: a PostgreSQL URL
    (`postgresql://user@host/db`) that every machine of a deployment shares; the environment
    variable `CORRAL_JOURNAL_URL` sets it too. See docs/journal.md."""

    @field_validator("url")
    @classmethod
    def _postgres_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("postgresql://", "postgres://")):
            raise ValueError(
                "journal.url must be a PostgreSQL URL (postgresql://user@host:port/database); "
                "leave it unset for the SQLite journal in CORRAL_HOME"
            )
        return value


class CorralConfig(_Section):
    """The effective configuration, after every layer is merged.

    `model_provider_api` picks the wire API (`responses` or `chat`). `network_access` and
    `writable_roots` may also be spelled Codex's way, under `[sandbox_workspace_write]`.
    `model_instructions_file` is read at load time and its text becomes `base_instructions`,
    unless a later layer set `base_instructions` itself. `home` is the resolved `$CORRAL_HOME`;
    no file may set it. API keys are never stored: `model_api_key_env` names the variable.
    `projects` holds trust entries; only the user's own file is read for trust.
    """

    model: str = Field(default="gpt-5.4-mini", min_length=1)
    model_provider_api: Literal["responses", "chat"] = "responses"
    model_provider: str | None = None
    """Codex's provider id: one of `[model_providers]`, or "openai" (the default endpoint)."""
    model_providers: dict[str, ModelProviderConfig] = {}
    model_reasoning_effort: ReasoningEffort | None = None
    """Sent with every model request (Responses `reasoning.effort`, Chat `reasoning_effort`)."""
    profile: str | None = None
    """The `[profiles.NAME]` table laid over the files' top-level keys (`--profile` wins)."""
    profiles: dict[str, dict[str, Any]] = {}
    base_url: str | None = None
    model_api_key_env: str = Field(default="OPENAI_API_KEY", min_length=1)
    request_max_retries: int | None = Field(default=None, ge=0, le=100)
    """A cap on retries of one model request; unset, `request_retry_deadline_sec` alone bounds
    it (429s, 5xx, dropped streams and timeouts are retried until then)."""
    request_retry_deadline_sec: float = Field(default=600.0, gt=0)
    request_backoff_initial_ms: float = Field(default=200.0, gt=0)
    """The first backoff between attempts when the server sends no Retry-After; it doubles."""
    stream_max_retries: int = Field(default=5, ge=0, le=100)
    stream_idle_timeout_ms: int = Field(default=300_000, ge=1)
    model_context_window: int = Field(default=272_000, ge=1)
    model_auto_compact_token_limit: int | None = Field(default=None, ge=1)
    tool_output_token_limit: int = Field(default=10_000, ge=1)

    sandbox_mode: SandboxMode = SandboxMode.WORKSPACE_WRITE
    approval_policy: ApprovalPolicy = ApprovalPolicy.NEVER
    network_access: bool = False
    network: NetworkConfig = NetworkConfig()
    writable_roots: tuple[Path, ...] = ()
    web_search: Literal["disabled", "cached", "live"] = "disabled"
    """Codex's setting: offer the Responses API's hosted web search (`live` pages, or the
    provider's `cached` index) to agents whose profile has network. Off by default."""

    personality: Literal["none", "friendly", "pragmatic"] = "pragmatic"
    base_instructions: str | None = None
    model_instructions_file: Path | None = None
    developer_instructions: str | None = None
    user_instructions: str | None = None
    project_doc_max_bytes: int = Field(default=32 * 1024, ge=0)
    project_doc_fallback_filenames: tuple[str, ...] = ()
    project_root_markers: tuple[str, ...] = DEFAULT_ROOT_MARKERS
    environment: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.+#-]{1,64}$")
    """The name AGENTS.md `@if environment=NAME` blocks test (`ci`, `dev`, ...); unset, no
    `environment=` block is kept."""
    instructions_max_tokens: int = Field(default=8_192, ge=1)
    """A cap on the instructions a person or project wrote for an agent (base instructions of
    one's own, `developer_instructions`, `user_instructions` and AGENTS.md as kept, at four
    bytes a token; corral's shipped base instructions do not count): past it the agent is
    refused, naming the source that pushed it over."""

    shell: ShellConfig = ShellConfig()
    shell_environment_policy: ShellEnvironmentPolicy = ShellEnvironmentPolicy()
    agents: AgentsConfig = AgentsConfig()
    budgets: BudgetConfig = BudgetConfig()
    prices: dict[str, ModelPrice] = {}
    rate_limits: dict[str, RateLimit] = {}
    mcp_servers: dict[str, McpServerConfig] = {}
    tool_search_threshold: int = Field(default=100, ge=0)
    """From this many MCP tools on, agents find them with `tool_search` (0: always)."""
    compaction: CompactionConfig = CompactionConfig()
    skills: SkillsConfig = SkillsConfig()
    memories: MemoriesConfig = MemoriesConfig()
    otel: OtelConfig = OtelConfig()
    service: ServiceConfig = ServiceConfig()
    executor: Literal["local", "temporal"] = "local"
    """Where runs execute: in this process, or on corral workers of the `[temporal]` server."""
    temporal: TemporalConfig = TemporalConfig()
    journal: JournalConfig = JournalConfig()
    hooks: HooksConfig = HooksConfig()
    """Commands to run on lifecycle events (Codex's names: `PreToolUse`, `Stop`, ...)."""

    home: Path = Field(default_factory=lambda: Path.home() / ".corral")
    projects: dict[str, ProjectTrust] = {}
    key_endpoints: tuple[str, ...] | None = None
    """The endpoints the user's own layers name, filled in by `load_config` (no file or flag may
    set it): the only ones an API key from the environment is sent to. None, for a config built
    in code: its own `base_url`."""

    @field_validator("sandbox_mode", mode="before")
    @classmethod
    def _codex_sandbox_spelling(cls, value: Any) -> Any:
        return SandboxMode.FULL_ACCESS if value == "danger-full-access" else value

    @property
    def request_attempts(self) -> int | None:
        """How many times one model request may be tried (None: until the retry deadline)."""
        return None if self.request_max_retries is None else self.request_max_retries + 1

    @property
    def auto_compact_token_limit(self) -> int:
        """Compaction threshold: 90% of the window, or the configured limit if lower."""
        ceiling = self.model_context_window * AUTO_COMPACT_PERCENT // 100
        configured = self.model_auto_compact_token_limit
        return ceiling if configured is None else min(configured, ceiling)
