"""The `[service]` allow-lists: every config key classified, allowances that open what they
name and nothing else, implied roots, base URL spellings, and runs re-checked at a restart."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, get_args, get_origin

import anyio
import pytest
from pydantic import BaseModel

from corral.agents import CorralConfig, ServiceConfig
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.service import (
    CorralClient,
    CorralService,
    RequestRefused,
    ServiceOptions,
    ServicePolicy,
)
from corral.orchestrator.service._overrides import ANY, Key, classify, named_keys
from corral.orchestrator.service._policy import resolve_run_config
from corral.orchestrator.service._urls import normalise_base_url
from corral.tools import SandboxMode

from ._harness import SCHEMA, TEMPLATE, TOKEN, WAIT, Gate, allowing_policy

MODEL_URL = "http://127.0.0.1:9/v1"


def schema_leaves(model: type[BaseModel], prefix: Key = ()) -> Iterator[Key]:
    """Every leaf key of the config's schema; `*` stands for a name of your own choosing."""
    for name, field in model.model_fields.items():
        yield from _leaves_of(field.annotation, (*prefix, name))


def _leaves_of(annotation: Any, key: Key) -> Iterator[Key]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield from schema_leaves(annotation, key)
    elif get_origin(annotation) is dict:
        yield from _leaves_of(get_args(annotation)[1], (*key, ANY))
    else:
        yield key


def test_every_config_key_is_classified_so_a_new_one_is_refused_until_someone_decides() -> None:
    leaves = list(schema_leaves(CorralConfig))
    unclassified = [".".join(key) for key in leaves if classify(key) == "unclassified"]
    assert len(leaves) > 80
    assert unclassified == []
    assert classify(("a_key_added_later",)) == "unclassified"


@pytest.mark.parametrize(
    ("key", "verdict"),
    [
        (("model",), "safe"),
        (("budgets", "run_max_cost_usd"), "safe"),
        (("agents", "roles", "mine", "instructions"), "safe"),
        (("agents", "roles", "mine", "sandbox_mode"), "sandbox"),
        (("mcp_servers", "x", "command"), "mcp"),
        (("otel", "endpoint"), "never"),
        (("model_api_key_env",), "never"),
        (("service", "allowed_roots"), "never"),
    ],
)
def test_keys_are_classified_by_what_they_let_a_request_do(key: Key, verdict: str) -> None:
    assert classify(key) == verdict


def test_settings_are_read_to_their_leaf_keys_in_every_spelling() -> None:
    settings = [
        "sandbox_workspace_write.network_access=true",
        'mcp_servers={x={command="sh"}}',
        '"model"="gpt"',
        "not a key",
    ]
    assert list(named_keys(settings)) == [
        ("network_access",),
        ("mcp_servers", "x", "command"),
        ("model",),
    ]


@pytest.mark.parametrize(
    ("given", "normal"),
    [
        ("HTTPS://API.OpenAI.com:443/v1/", "https://api.openai.com/v1"),
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
        ("http://[::1]:80/v1", "http://[::1]/v1"),
    ],
)
def test_spellings_of_one_endpoint_normalise_to_one(given: str, normal: str) -> None:
    assert normalise_base_url(given) == normal


def policy(tmp_path: Path, **settings: Any) -> ServicePolicy:
    service = ServiceConfig(allowed_roots=(tmp_path,), **settings)
    config = CorralConfig(base_url=MODEL_URL, service=service, home=tmp_path / "home")
    return ServicePolicy.from_config(config, tmp_path)


def run_config(allowed: ServicePolicy, cwd: Path, *settings: str, **flags: Any) -> CorralConfig:
    env = {"CORRAL_HOME": str(allowed.home), "CORRAL_BASE_URL": MODEL_URL}
    return resolve_run_config(allowed, cwd=cwd, env=env, overrides=flags, settings=settings)


def test_safe_overrides_apply_within_the_default_allowances(tmp_path: Path) -> None:
    config = run_config(
        policy(tmp_path),
        tmp_path,
        "model=other",
        "budgets.run_max_turns=3",
        "sandbox_mode=read-only",
        'writable_roots=["sub"]',
        base_url=MODEL_URL + "/",
    )
    assert (config.model, config.budgets.run_max_turns) == ("other", 3)
    assert config.sandbox_mode == SandboxMode.READ_ONLY
    assert config.writable_roots == (tmp_path / "sub",)


def test_each_allowance_opens_what_it_names(tmp_path: Path) -> None:
    wide = policy(
        tmp_path,
        allowed_base_urls=("https://models.example/v1",),
        max_sandbox=SandboxMode.FULL_ACCESS,
        allow_mcp_overrides=True,
        allow_network=True,
    )
    config = run_config(
        wide,
        tmp_path,
        'mcp_servers.x.command="true"',
        "network_access=true",
        'approval_policy="on-request"',
        base_url="https://MODELS.example/v1/",
        sandbox_mode="full-access",
    )
    assert config.base_url == "https://MODELS.example/v1/"
    assert config.sandbox_mode == SandboxMode.FULL_ACCESS and config.network_access
    assert "x" in config.mcp_servers


def test_an_allowance_opens_nothing_else(tmp_path: Path) -> None:
    mcp_only = policy(tmp_path, allow_mcp_overrides=True)
    with pytest.raises(RequestRefused, match=r"network_access = true is refused"):
        run_config(mcp_only, tmp_path, "network_access=true")
    with pytest.raises(RequestRefused, match=r"wider than \[service\] max_sandbox"):
        run_config(mcp_only, tmp_path, sandbox_mode="full-access")


def test_the_servers_working_folder_is_the_root_unless_it_is_slash_or_home(
    tmp_path: Path,
) -> None:
    config = CorralConfig(base_url=MODEL_URL, home=tmp_path / "home")
    assert ServicePolicy.from_config(config, tmp_path).roots == (tmp_path.resolve(),)
    for workdir in (Path("/"), Path.home()):
        implied = ServicePolicy.from_config(config, workdir)
        assert implied.roots == ()
        with pytest.raises(RequestRefused, match=r"none is set.*set \[service\] allowed_roots"):
            implied.check_folder(workdir, "cd")


def test_a_bad_allow_list_entry_stops_the_server_from_starting(tmp_path: Path) -> None:
    service = ServiceConfig(allowed_base_urls=("file:///etc",))
    with pytest.raises(Exception, match=r"the server's config: base_url 'file:///etc'"):
        ServicePolicy.from_config(CorralConfig(service=service), tmp_path)
    with pytest.raises(ValueError, match="not an absolute path"):
        ServiceConfig(allowed_roots=(Path("relative"),))


@asynccontextmanager
async def serving(tmp_path: Path, model_url: str, service: ServiceConfig) -> AsyncIterator[str]:
    home = tmp_path / "home"
    options = ServiceOptions(
        home=home,
        token=TOKEN,
        port=0,
        env={"CORRAL_HOME": str(home)},
        policy=allowing_policy(tmp_path, model_url, service),
    )
    async with anyio.create_task_group() as tg:
        yield await tg.start(CorralService(options).run)
        tg.cancel_scope.cancel()


@pytest.mark.anyio
async def test_a_run_accepted_under_a_wider_config_is_refused_when_a_narrower_server_restarts(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    gate = Gate()
    wide = ServiceConfig(allowed_roots=(tmp_path,), max_sandbox=SandboxMode.FULL_ACCESS)
    narrow = ServiceConfig(allowed_roots=(tmp_path,))
    async with serve_model_server(gate) as model:
        request = {**fanout_request(tmp_path, model.base_url), "sandbox": "full-access"}
        async with serving(tmp_path, model.base_url, wide) as url, CorralClient(url, TOKEN) as c:
            run_id = (await c.submit(request))["id"]
            with anyio.fail_after(WAIT):
                await gate.reached.wait()
        gate.release()
        async with serving(tmp_path, model.base_url, narrow) as url, CorralClient(url, TOKEN) as c:
            run = await c.get(run_id)
    assert run["status"] == "failed"
    assert "sandbox full-access is wider than [service] max_sandbox" in caplog.text


def fanout_request(cwd: Path, model_url: str) -> dict[str, Any]:
    return {
        "kind": "fanout",
        "items": [{"n": 1}],
        "template": TEMPLATE,
        "schema": SCHEMA,
        "base_url": model_url,
        "cd": str(cwd),
    }
