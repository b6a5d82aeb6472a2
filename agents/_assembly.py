"""Putting one agent together: its spec, its core, its turn context and its runner.

`AgentSpec` is everything needed to rebuild an agent, and it is what the journal keeps at the
agent's start (the API key excepted), so `corral resume` builds the same agent again. The
runners of `corral exec`, of fan-out workers and of subagents are all assembled here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from corral.tools import PermissionProfile, ToolContext, ToolRegistry, ToolServices

from ._agents_md import AgentsMd, AgentsMdPart, load_agents_md
from ._config import (
    BudgetConfig,
    CorralConfig,
    ModelPrice,
    ShellConfig,
    ShellEnvironmentPolicy,
)
from ._core import AgentCore, CoreConfig
from ._endpoint_keys import named_endpoints, provider_extras
from ._environment import capture_environment
from ._events import AgentStatus, TurnContext
from ._fragments import DEVELOPER_INSTRUCTIONS
from ._instruction_cap import check_instruction_cap
from ._outputs import DEFAULT_MAX_TOOL_OUTPUT_BYTES
from ._permissions_fragment import render_permissions
from ._store import AgentRecord
from .model import ModelSettings


class AgentsMdSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    home: Path
    max_bytes: int = 32 * 1024
    fallback_names: tuple[str, ...] = ()
    root_markers: tuple[str, ...] = (".git",)
    environment: str | None = None
    """What `@if environment=NAME` blocks test."""
    max_instruction_tokens: int = 8_192
    """The cap on the instructions `instruction_sources` counts."""


class AgentSpec(BaseModel):
    """One agent, fully described. Serialisable; the API key is never part of it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent_id: str
    run_id: str
    parent_id: str | None = None
    nickname: str = "main"
    role: str = "general"
    depth: int = 0
    model: ModelSettings
    instructions: str
    tools: tuple[str, ...]
    cwd: Path
    profile: PermissionProfile
    context_window: int = 272_000
    auto_compact_token_limit: int | None = None
    tool_output_token_limit: int = 10_000
    max_tool_output_bytes: int = DEFAULT_MAX_TOOL_OUTPUT_BYTES
    early_compact_percent: int | None = 80
    budgets: BudgetConfig = BudgetConfig()
    shell: ShellConfig = ShellConfig()
    shell_environment_policy: ShellEnvironmentPolicy = ShellEnvironmentPolicy()
    developer_instructions: str | None = None
    user_instructions: str | None = None
    agents_md: AgentsMdSettings
    web_search: Literal["disabled", "cached", "live"] = "disabled"

    def to_journal(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude={"model": {"api_key"}})

    def journal_record(self, task: str, *, now: float) -> AgentRecord:
        """The journal's record of this agent starting on `task` (resume rebuilds it from this)."""
        return AgentRecord(
            agent_id=self.agent_id,
            run_id=self.run_id,
            parent_id=self.parent_id,
            nickname=self.nickname,
            role=self.role,
            status=str(AgentStatus.RUNNING),
            created_at=now,
            updated_at=now,
            base_instructions=self.instructions,
            config={**self.to_journal(), "task": task},
            depth=self.depth,
        )

    @classmethod
    def from_journal(
        cls,
        data: Mapping[str, Any],
        *,
        env: Mapping[str, str],
        config: CorralConfig | None = None,
        base_url: str | None = None,
    ) -> AgentSpec:
        """The journaled spec, moved to `base_url` if given, with a key from `env` only if
        `config` (the one loaded now, by the user) names its endpoint: the journal cannot."""
        spec = cls.model_validate(dict(data))
        model = spec.model.model_copy(update={"base_url": base_url}) if base_url else spec.model
        named = named_endpoints(config) if config is not None else ()
        key_var = config.model_api_key_env if config is not None else None
        # The header variables, like the key's, come from the user's config, never the journal.
        extras = provider_extras(config, model.base_url, env) if config is not None else {}
        header_vars = extras.get("env_http_headers", {})
        model = model.model_copy(update={"env_http_headers": header_vars, "secret_headers": {}})
        return spec.model_copy(
            update={"model": model.with_endpoint(env, named=named, key_var=key_var)}
        )


def model_settings_from_config(config: CorralConfig, env: Mapping[str, str]) -> ModelSettings:
    """The endpoint settings a config describes, the key read from its named variable and
    sent only where the user's own layers point (`api_key_for`)."""
    return ModelSettings.resolve(
        env=env,
        named=named_endpoints(config),
        key_var=config.model_api_key_env,
        model=config.model,
        api=config.model_provider_api,
        base_url=config.base_url,
        max_attempts=config.request_attempts,
        retry_deadline=config.request_retry_deadline_sec,
        backoff_initial=config.request_backoff_initial_ms / 1000,
        stream_idle_timeout=config.stream_idle_timeout_ms / 1000,
        reasoning_effort=config.model_reasoning_effort,
        **provider_extras(config, config.base_url, env),
    )


def spec_from_config(
    config: CorralConfig,
    *,
    agent_id: str,
    run_id: str,
    cwd: Path,
    model: ModelSettings,
    instructions: str,
    tools: Sequence[str],
    profile: PermissionProfile,
) -> AgentSpec:
    return AgentSpec(
        agent_id=agent_id,
        run_id=run_id,
        model=model,
        instructions=instructions,
        tools=tuple(tools),
        cwd=cwd,
        profile=profile,
        context_window=config.model_context_window,
        auto_compact_token_limit=config.model_auto_compact_token_limit,
        tool_output_token_limit=config.tool_output_token_limit,
        max_tool_output_bytes=config.journal.max_tool_output_bytes,
        early_compact_percent=config.compaction.early_percent,
        budgets=config.budgets,
        shell=config.shell,
        shell_environment_policy=config.shell_environment_policy,
        developer_instructions=config.developer_instructions,
        user_instructions=config.user_instructions,
        web_search=config.web_search,
        agents_md=AgentsMdSettings(
            home=config.home,
            max_bytes=config.project_doc_max_bytes,
            fallback_names=config.project_doc_fallback_filenames,
            root_markers=config.project_root_markers,
            environment=config.environment,
            max_instruction_tokens=config.instructions_max_tokens,
        ),
    )


def build_core(
    spec: AgentSpec, registry: ToolRegistry, price: ModelPrice | None = None
) -> AgentCore:
    """A fresh core for `spec` offering `registry`'s tools, keeping every per-agent budget
    (cost priced at `price`)."""
    budgets = spec.budgets
    return AgentCore(
        CoreConfig(
            agent_id=spec.agent_id,
            model=spec.model.model,
            instructions=spec.instructions,
            tools=tuple(registry.responses_tools()),
            hosted_tools=hosted_tools(spec),
            context_window=spec.context_window,
            auto_compact_token_limit=spec.auto_compact_token_limit,
            tool_output_token_limit=spec.tool_output_token_limit,
            max_tool_output_bytes=spec.max_tool_output_bytes,
            early_compact_percent=spec.early_compact_percent,
            max_turns=budgets.max_turns,
            max_tool_calls=budgets.max_tool_calls,
            max_tokens=budgets.max_tokens,
            max_cost_usd=budgets.max_cost_usd,
            max_wall_time_s=budgets.max_wall_time_s,
            max_cost_growth=budgets.max_cost_growth,
            growth_baseline_turns=budgets.cost_growth_baseline_turns,
            price=price,
            metadata={"agent_id": spec.agent_id, "run_id": spec.run_id},
        )
    )


def hosted_tools(spec: AgentSpec) -> tuple[dict[str, Any], ...]:
    """The provider-run tools `spec` is offered: web search, when it is on, the profile has
    network, and the API is Responses (Chat Completions has no hosted tools)."""
    if spec.web_search == "disabled" or not spec.profile.network or spec.model.api != "responses":
        return ()
    return ({"type": "web_search", "external_web_access": spec.web_search == "live"},)


def web_search_note(spec: AgentSpec) -> str | None:
    """What the environment context says of a web search that is on but cannot be offered."""
    if spec.web_search == "disabled" or not spec.profile.network:
        return None
    if spec.model.api == "chat":
        return "unavailable: the Chat Completions API has no hosted web search"
    return None


def build_tool_context(spec: AgentSpec, services: ToolServices | None = None) -> ToolContext:
    return ToolContext(
        cwd=spec.cwd,
        profile=spec.profile,
        services=services or ToolServices(),
        agent_id=spec.agent_id,
        approval_timeout=spec.shell.approval_timeout_sec,
    )


def build_turn_context(
    spec: AgentSpec,
    *,
    now: datetime,
    subagents: tuple[tuple[str, str], ...] = (),
    subagent_context: str | None = None,
    skills: str | None = None,
) -> TurnContext:
    """Capture the environment and read AGENTS.md as they are now (blocking file reads)."""
    settings = spec.agents_md
    agents_md = load_agents_md(
        spec.cwd,
        home=settings.home,
        fallback_names=settings.fallback_names,
        max_bytes=settings.max_bytes,
        root_markers=settings.root_markers,
        environment=settings.environment,
    )
    check_instruction_cap(
        settings.max_instruction_tokens,
        base=spec.instructions,
        developer=spec.developer_instructions,
        user=spec.user_instructions,
        agents_md=agents_md,
    )
    developer = spec.developer_instructions
    profile = spec.profile
    # Full access runs commands unconfined, so no proxy stands between them and the network.
    enforced = profile.network_mode == "restricted" and profile.sandbox != "full-access"
    return TurnContext(
        environment=capture_environment(
            spec.cwd,
            now=now,
            network=profile.network,
            subagents=subagents,
            allowed_domains=profile.allowed_domains if enforced else None,
            denied_domains=profile.denied_domains if enforced else (),
            web_search=web_search_note(spec),
        ),
        permissions=render_permissions(spec.profile),
        developer_instructions=DEVELOPER_INSTRUCTIONS.render(f"\n{developer}\n")
        if developer
        else None,
        skills=skills,
        agents_md=_with_user_instructions(agents_md, spec.user_instructions),
        subagent_context=subagent_context,
    )


def _with_user_instructions(agents_md: AgentsMd, user_instructions: str | None) -> str | None:
    if not user_instructions or not user_instructions.strip():
        return agents_md.render()
    config_part = AgentsMdPart(
        path=Path("config.toml#user_instructions"), text=user_instructions.strip(), truncated=False
    )
    return AgentsMd(cwd=agents_md.cwd, parts=(config_part, *agents_md.parts)).render()
