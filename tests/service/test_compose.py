"""compose.yaml, the Dockerfile and .dockerignore, checked against what corral actually reads.

Nothing is built or started: the files are parsed, and their settings go through corral's own
config loading, token resolution, telemetry settings and command-line parser, so a rename on
either side fails here.
"""

from __future__ import annotations

import fnmatch
import functools
import json
import re
import shlex
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from agents import OtelConfig, load_config, model_settings_from_config
from agents._config._sources import BASE_URL_VARS, ENV_KEYS, corral_home
from observability import CAPTURE_ENV, telemetry_settings
from orchestrator.cli._main import build_parser
from orchestrator.service import check_bind, resolve_token
from orchestrator.service._auth import OPEN_PATHS, TOKEN_ENV

ROOT = Path(__file__).resolve().parents[2]
HOST_ENV = {
    "CORRAL_API_TOKEN": "compose-test-token",
    "CORRAL_BASE_URL": "https://models.example/v1",
    "CORRAL_MODEL": "gpt-compose-test",
    "OPENAI_API_KEY": "sk-compose-test",
}
# Values swapped in for an OTEL_* variable to see whether observability's result moves.
OTEL_PROBES = ("console", "grpc", "http://probe.invalid:1", "probe-service")
OTLP_PORTS = {"http/protobuf": 4318, "grpc": 4317}
_VARIABLE = re.compile(r"\$\{(?P<name>\w+)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}")


class MissingVariable(Exception):
    """A `${NAME:?message}` whose variable the host did not set."""


@functools.cache
def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))
    return data


def service(name: str) -> dict[str, Any]:
    found: dict[str, Any] = compose()["services"][name]
    return found


@functools.cache
def dockerfile() -> tuple[tuple[str, str], ...]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined and comments dropped."""
    pairs: list[tuple[str, str]] = []
    pending = ""
    for line in (ROOT / "Dockerfile").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        pending += " " + line.strip().removesuffix("\\")
        if not line.rstrip().endswith("\\"):
            instruction, _, args = pending.strip().partition(" ")
            pairs.append((instruction.upper(), " ".join(args.split())))
            pending = ""
    return tuple(pairs)


def instructions(name: str) -> list[str]:
    return [args for instruction, args in dockerfile() if instruction == name]


def exec_form(args: str) -> list[str]:
    value = json.loads(args)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), args
    return value


def image_env() -> dict[str, str]:
    pairs = (word.split("=", 1) for args in instructions("ENV") for word in shlex.split(args))
    return {name: value for name, value in pairs}


def serve_command() -> list[str]:
    (entrypoint,) = instructions("ENTRYPOINT")
    (cmd,) = instructions("CMD")
    assert exec_form(entrypoint) == ["corral"]
    return exec_form(cmd)


def interpolate(text: str, host: Mapping[str, str]) -> str:
    """Compose's `${NAME}`, `${NAME:-default}` and `${NAME:?message}` against `host`."""

    def value(match: re.Match[str]) -> str:
        name, op, arg = match["name"], match["op"] or "", match["arg"] or ""
        given = host.get(name)
        unset = given is None or (op.startswith(":") and not given)
        if unset and op.endswith("?"):
            raise MissingVariable(f"{name}: {arg}")
        return arg if unset and op.endswith("-") else (given or "")

    return _VARIABLE.sub(value, text)


def container_env(host: Mapping[str, str]) -> dict[str, str]:
    """The corral container's environment when compose runs in a shell with `host`."""
    declared = service("corral")["environment"]
    if isinstance(declared, list):
        declared = dict(
            item.partition("=")[::2] if "=" in item else (item, None) for item in declared
        )
    env: dict[str, str] = {}
    for name, raw in declared.items():
        if raw is None:  # passed through from the host, or left unset
            if name in host:
                env[name] = host[name]
        else:
            env[name] = interpolate(str(raw), host)
    return env


def container_ports(name: str) -> dict[int, str]:
    """Container port -> the host address it is published on ("" for every interface)."""
    published: dict[int, str] = {}
    for entry in service(name).get("ports", []):
        if isinstance(entry, dict):
            published[int(entry["target"])] = str(entry.get("host_ip", ""))
            continue
        *host, target = str(entry).split("/")[0].split(":")
        published[int(target)] = host[0] if len(host) == 2 else ""
    return published


def volume_mounts(name: str) -> dict[str, str]:
    """Mount target -> source of a service's volumes."""
    mounts: dict[str, str] = {}
    for entry in service(name).get("volumes", []):
        if isinstance(entry, dict):
            mounts[str(entry["target"])] = str(entry["source"])
        else:
            source, target = str(entry).split(":")[:2]
            mounts[target] = source
    return mounts


def test_compose_file_parses_with_corral_built_here_and_lgtm_from_grafana() -> None:
    data = compose()
    assert "version" not in data
    assert {"corral", "lgtm"} <= set(data["services"])
    build = service("corral")["build"]
    assert (ROOT / build["context"] / build["dockerfile"]).resolve() == ROOT / "Dockerfile"
    assert str(service("lgtm")["image"]).partition(":")[0] == "grafana/otel-lgtm"
    assert "lgtm" in service("corral")["depends_on"]


def test_dockerfile_command_is_a_corral_serve_the_real_parser_accepts() -> None:
    command = serve_command()
    args = build_parser(command).parse_args(command)
    assert args.command == "serve"
    assert args.host == "0.0.0.0"
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert "corral" in scripts["scripts"]


def test_corral_publishes_the_port_the_image_exposes_and_serve_listens_on() -> None:
    command = serve_command()
    port = build_parser(command).parse_args(command).port
    assert [int(p.split("/")[0]) for p in instructions("EXPOSE")] == [port]
    assert set(container_ports("corral")) == {port}


def test_healthcheck_asks_the_open_health_endpoint_on_the_served_port() -> None:
    command = serve_command()
    port = build_parser(command).parse_args(command).port
    (healthcheck,) = instructions("HEALTHCHECK")
    probe = exec_form(healthcheck.partition(" CMD ")[2])
    assert probe[:2] == ["python", "-c"]
    compile(probe[2], "<healthcheck>", "exec")
    url = urlsplit(re.findall(r"http://[^'\"]+", probe[2])[0])
    assert url.hostname == "127.0.0.1" and url.port == port
    assert url.path in OPEN_PATHS


def test_home_volume_is_declared_and_mounted_where_corral_keeps_its_home(
    tmp_path: Path,
) -> None:
    env = container_env(HOST_ENV)
    home = corral_home(env)
    assert load_config(cwd=tmp_path, env=env).config.home == home
    assert image_env()["CORRAL_HOME"] == str(home)
    assert [exec_form(v) for v in instructions("VOLUME")] == [[str(home)]]
    source = volume_mounts("corral")[str(home)]
    assert source == "corral-home"
    assert source in compose()["volumes"]


def test_every_corral_variable_in_compose_is_one_corral_reads() -> None:
    read = {*ENV_KEYS, *BASE_URL_VARS, "CORRAL_HOME", TOKEN_ENV}
    declared = {name for name in container_env(HOST_ENV) if name.startswith("CORRAL_")}
    assert declared - read == set()
    assert {"CORRAL_HOME", TOKEN_ENV, "CORRAL_BASE_URL", "CORRAL_MODEL"} <= declared


def test_model_endpoint_key_and_name_from_the_host_reach_the_model_settings(
    tmp_path: Path,
) -> None:
    env = container_env(HOST_ENV)
    config = load_config(cwd=tmp_path, env=env).config
    settings = model_settings_from_config(config, env)
    assert config.model_api_key_env in env
    assert settings.base_url == HOST_ENV["CORRAL_BASE_URL"]
    assert settings.api_key is not None
    assert settings.api_key.get_secret_value() == HOST_ENV["OPENAI_API_KEY"]
    assert settings.model == HOST_ENV["CORRAL_MODEL"]


def test_model_variables_left_unset_on_the_host_keep_corrals_defaults(tmp_path: Path) -> None:
    env = container_env({TOKEN_ENV: "t"})
    defaults = load_config(cwd=tmp_path, env={"CORRAL_HOME": env["CORRAL_HOME"]}).config
    config = load_config(cwd=tmp_path, env=env).config
    assert (config.model, config.base_url, config.model_provider_api) == (
        defaults.model,
        defaults.base_url,
        defaults.model_provider_api,
    )


def test_compose_refuses_to_start_without_an_api_token() -> None:
    with pytest.raises(MissingVariable, match=TOKEN_ENV):
        container_env({k: v for k, v in HOST_ENV.items() if k != TOKEN_ENV})


def test_the_token_from_the_host_lets_serve_listen_on_every_interface(tmp_path: Path) -> None:
    token = resolve_token(container_env(HOST_ENV), tmp_path)
    assert token.configured and token.value == HOST_ENV[TOKEN_ENV]
    check_bind(build_parser(serve_command()).parse_args(serve_command()).host, token)
    assert list(tmp_path.iterdir()) == []


def test_every_otel_variable_in_compose_changes_what_observability_exports() -> None:
    env = container_env(HOST_ENV)
    baseline = telemetry_settings(OtelConfig(), env)
    for name in (n for n in env if n.startswith("OTEL_") and n != CAPTURE_ENV):
        probes = (p for p in OTEL_PROBES if p != env[name])
        moved = [telemetry_settings(OtelConfig(), {**env, name: p}) != baseline for p in probes]
        assert any(moved), f"{name} is set in compose.yaml but observability does not read it"


def test_traces_and_metrics_go_to_lgtm_on_the_port_for_their_protocol() -> None:
    settings = telemetry_settings(OtelConfig(), container_env(HOST_ENV))
    assert (settings.traces, settings.metrics) == ("otlp", "otlp")
    assert settings.endpoint is not None
    endpoint = urlsplit(settings.endpoint)
    assert endpoint.hostname == "lgtm"
    assert endpoint.port == OTLP_PORTS[settings.protocol]
    assert {3000, *OTLP_PORTS.values()} <= set(container_ports("lgtm"))


def test_published_ports_stay_on_the_hosts_loopback() -> None:
    for name in ("corral", "lgtm"):
        assert set(container_ports(name).values()) == {"127.0.0.1"}, name


def test_dockerfile_builds_on_python_311_slim_with_bubblewrap_and_git() -> None:
    assert instructions("FROM") == ["python:3.11-slim"]
    (apt,) = (run for run in instructions("RUN") if "apt-get install" in run)
    words = apt.split()
    assert {"bubblewrap", "git", "ca-certificates", "--no-install-recommends"} <= set(words)
    assert "rm -rf /var/lib/apt/lists/*" in apt
    assert any("pip install --no-cache-dir" in run for run in instructions("RUN"))


def test_image_runs_unprivileged_and_compose_lets_bubblewrap_make_namespaces() -> None:
    (user,) = instructions("USER")
    assert user not in ("root", "0")
    assert any("useradd --create-home" in run and user in run for run in instructions("RUN"))
    corral = service("corral")
    assert {"seccomp=unconfined", "apparmor=unconfined"} <= set(corral["security_opt"])
    assert not corral.get("privileged", False)


def test_build_context_lets_in_every_package_and_file_the_wheel_is_built_from() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    found = project["tool"]["setuptools"]["packages"]["find"]["include"]
    needed = {"pyproject.toml", project["project"]["readme"], *(p.rstrip("*") for p in found)}
    lines = (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    patterns = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    assert patterns[0] == "*"
    assert needed <= {p[1:] for p in patterns if p.startswith("!")}


def test_every_data_file_in_the_packages_is_declared_as_package_data() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs = project["tool"]["setuptools"]["package-data"]["*"]
    found = project["tool"]["setuptools"]["packages"]["find"]["include"]
    for package in (ROOT / p.rstrip("*") for p in found):
        for path in package.rglob("*"):
            if path.is_dir() or "__pycache__" in path.parts or path.suffix in (".py", ".pyc"):
                continue
            assert any(fnmatch.fnmatch(path.name, g) for g in globs), f"not in the wheel: {path}"
