"""What an API request may ask of the server: its `[service]` allow-lists, enforced.

A token holder chooses a run's folder, endpoint, sandbox and config overrides; `ServicePolicy`
holds each to what the server's own config allows (never to the run's config, which a project
layer in the chosen folder could widen) and refuses the rest with `RequestRefused`, a 422 that
names the rule. `_overrides` says which keys a request changed and what each needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from corral.agents import CorralConfig, load_config
from corral.tools import ApprovalPolicy, SandboxMode, is_within

from ._errors import RequestRefused, ServiceOptionsError
from ._overrides import Key, changed_keys, classify, leaf_value, named_keys, never_reason
from ._urls import OPENAI_BASE_URL, normalise_base_url

_MODE_RANK = {SandboxMode.READ_ONLY: 0, SandboxMode.WORKSPACE_WRITE: 1, SandboxMode.FULL_ACCESS: 2}


@dataclass(frozen=True)
class ServicePolicy:
    """The server's allowances, resolved once at start (`from_config`)."""

    base_urls: frozenset[str]
    """Normalised endpoints a run may use: the server's own and `allowed_base_urls`."""
    roots: tuple[Path, ...]
    """Resolved folders a run's folders may be in or under."""
    workdir: Path
    """Where a request without `cd` runs: the server's working folder."""
    home: Path
    """corral's home, where no run may work."""
    max_sandbox: SandboxMode = SandboxMode.WORKSPACE_WRITE
    allow_mcp_overrides: bool = False
    allow_network: bool = False
    no_roots_because: str = ""
    """Why no folder is allowed, when none is, for the refusal's message."""

    @classmethod
    def from_config(cls, config: CorralConfig, workdir: Path) -> ServicePolicy:
        """The policy of a server started in `workdir` with `config`; `ServiceOptionsError`
        when an allow-list entry cannot be used."""
        settings, workdir = config.service, workdir.resolve()
        try:
            own = normalise_base_url(config.base_url or OPENAI_BASE_URL)
            listed = {normalise_base_url(url) for url in settings.allowed_base_urls}
        except ValueError as exc:
            raise ServiceOptionsError(f"the server's config: {exc}") from None
        roots = tuple(root.resolve() for root in settings.allowed_roots)
        because = ""
        if not settings.allowed_roots:
            roots, because = _implied_roots(workdir)
        return cls(
            base_urls=frozenset({own, *listed}),
            roots=roots,
            workdir=workdir,
            home=config.home.resolve(),
            max_sandbox=settings.max_sandbox,
            allow_mcp_overrides=settings.allow_mcp_overrides,
            allow_network=settings.allow_network,
            no_roots_because=because,
        )

    @classmethod
    def of_server(cls, env: Mapping[str, str]) -> ServicePolicy:
        """The policy of a server started here, from its config (blocking: it reads files)."""
        workdir = Path.cwd()
        return cls.from_config(load_config(cwd=workdir, env=env).config, workdir)

    def check_folder(self, path: Path, field: str) -> Path:
        """`path` resolved, if a run may work there; `RequestRefused` naming the rule if not."""
        try:
            resolved = path.resolve()
        except (OSError, ValueError, RuntimeError) as exc:  # a NUL byte, a symlink loop
            raise RequestRefused(
                f"{field} {str(path)[:200]!r} is not a usable path: {exc}"
            ) from None
        if is_within(resolved, [self.home]):
            raise RequestRefused(
                f"{field} {resolved} is inside corral's home {self.home}, where no run may work"
            )
        if not is_within(resolved, self.roots):
            raise RequestRefused(
                f"{field} {resolved} is not in [service] allowed_roots{self._roots()}"
            )
        return resolved

    def check_config(self, baseline: CorralConfig, config: CorralConfig) -> None:
        """Refuse a run config that goes past the allowances, or that the request widened with a
        key no request may change; `baseline` is the config without the request's settings."""
        self._check_base_url(config.base_url)
        self._check_sandbox(config.sandbox_mode, "sandbox")
        self._check_approval(config.approval_policy)
        for key in changed_keys(baseline, config):
            self._check_change(key, baseline, config)

    def _check_change(self, key: Key, baseline: CorralConfig, config: CorralConfig) -> None:
        verdict, value = classify(key), leaf_value(config, key)
        name = ".".join(key)
        if key == ("key_endpoints",):  # where the key may go: the endpoints the request named
            for url in set(config.key_endpoints or ()) - set(baseline.key_endpoints or ()):
                self._check_base_url(url)
            return
        if verdict in ("safe", "base_url", "approval"):  # checked on the whole config
            return
        if verdict == "sandbox":
            if value is not None:  # a role without a sandbox of its own
                self._check_sandbox(SandboxMode(value), name)
        elif verdict == "network" and not self.allow_network:
            # Any change of a domain list may widen (dropping a denied domain does): refused.
            if key != ("network_access",):
                raise RequestRefused(f"{name} is refused: [service] allow_network is off")
            if value:
                raise RequestRefused(
                    "network_access = true is refused: [service] allow_network is off"
                )
        elif verdict == "writable_roots":
            for root in config.writable_roots:
                if root not in baseline.writable_roots:
                    self.check_folder(root, "writable root")
        elif verdict == "mcp" and not self.allow_mcp_overrides:
            raise RequestRefused(
                f"config override {name} is refused: [service] allow_mcp_overrides is off "
                "(an MCP server's command runs on the server)"
            )
        elif verdict in ("never", "unclassified"):
            self.refuse_key(key)

    def refuse_key(self, key: Key) -> NoReturn:
        """Refuse a config override no request may make."""
        name, reason = ".".join(key), never_reason(key)
        raise RequestRefused(f"config override {name} is refused: {reason}; leave it out")

    def _check_base_url(self, base_url: str | None) -> None:
        try:
            url = normalise_base_url(base_url or OPENAI_BASE_URL)
        except ValueError as exc:
            raise RequestRefused(str(exc)) from None
        if url not in self.base_urls:
            allowed = ", ".join(sorted(self.base_urls))
            raise RequestRefused(
                f"base_url {url} is not in [service] allowed_base_urls; this server sends its "
                f"model key only to {allowed}"
            )

    def _check_sandbox(self, mode: SandboxMode, field: str) -> None:
        if _MODE_RANK[mode] > _MODE_RANK[self.max_sandbox]:
            raise RequestRefused(
                f"{field} {mode.value} is wider than [service] max_sandbox "
                f"({self.max_sandbox.value}); ask for {self.max_sandbox.value} or narrower"
            )

    def _check_approval(self, policy: ApprovalPolicy) -> None:
        # Over the API, escalations are approved by token holders: any policy but `never` lets
        # them run commands outside the sandbox, which is what full access means.
        if policy != ApprovalPolicy.NEVER and self.max_sandbox != SandboxMode.FULL_ACCESS:
            raise RequestRefused(
                f"approval_policy {policy.value} lets a token holder approve commands outside "
                f"the sandbox, which [service] max_sandbox ({self.max_sandbox.value}) does not "
                "allow; use never, or set max_sandbox = full-access"
            )

    def _roots(self) -> str:
        if self.roots:
            return f" ({', '.join(map(str, self.roots))}); choose a folder in one of them"
        return f": none is set, and {self.no_roots_because}; set [service] allowed_roots"


def resolve_run_config(
    policy: ServicePolicy,
    *,
    cwd: Path,
    env: Mapping[str, str],
    overrides: Mapping[str, Any],
    settings: Iterable[str],
) -> CorralConfig:
    """The run's config as the CLI would load it in `cwd`, once `policy` allows it."""
    given = list(settings)
    for key in named_keys(given):
        if classify(key) == "never":
            policy.refuse_key(key)
    baseline = load_config(cwd=cwd, env=env).config
    config = load_config(cwd=cwd, env=env, overrides=overrides, cli_settings=given)
    policy.check_config(baseline, config.config)
    return config.config


def _implied_roots(workdir: Path) -> tuple[tuple[Path, ...], str]:
    user_home = Path.home().resolve()
    if workdir == Path(workdir.anchor) or is_within(user_home, [workdir]):
        return (), f"the server's working folder {workdir} is / or holds the home folder"
    return (workdir,), ""
