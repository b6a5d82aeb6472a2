"""Attacks by an MCP client on corral's MCP server: reading files outside the server's working
folder through `items_file`, working outside the allowed roots, a sandbox or endpoint wider than
the server's own, and config or fields the tools do not take. Each is refused with one line,
before any worker starts."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from corral.agents import ServiceConfig
from corral.orchestrator.model_server import serve_model_server
from corral.tools import SandboxMode
from tests._git import git

from ..service._harness import reporter
from ._harness import fanout_args, open_served, refusal

pytestmark = [pytest.mark.anyio, pytest.mark.hostile]

ITEM = '{"n": 1}\n'


def _outside(tmp_path: Path) -> Path:
    """A folder beside the server's working folder, holding a valid items file."""
    folder = tmp_path.parent / f"{tmp_path.name}-outside"
    folder.mkdir(exist_ok=True)
    (folder / "items.jsonl").write_text(ITEM)
    return folder


def _dotdot(tmp_path: Path) -> str:
    return f"../{tmp_path.name}-outside/items.jsonl"


def _absolute(tmp_path: Path) -> str:
    return str(_outside(tmp_path) / "items.jsonl")


def _file_link(tmp_path: Path) -> str:
    (tmp_path / "link.jsonl").symlink_to(_outside(tmp_path) / "items.jsonl")
    return "link.jsonl"


def _folder_link(tmp_path: Path) -> str:
    (tmp_path / "shared").symlink_to(_outside(tmp_path), target_is_directory=True)
    return "shared/items.jsonl"


def _in_home(tmp_path: Path) -> str:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "items.jsonl").write_text(ITEM)  # corral's home is in the folder, and still off limits
    return "home/items.jsonl"


def _home_via_dots(tmp_path: Path) -> str:
    _in_home(tmp_path)
    (tmp_path / "sub").mkdir()
    return "sub/../home/./items.jsonl"


def _fifo(tmp_path: Path) -> str:
    os.mkfifo(tmp_path / "pipe.jsonl")  # opening it must not wait for a writer
    return "pipe.jsonl"


def _system_file(tmp_path: Path) -> str:
    return "/etc/passwd"


def _nul(tmp_path: Path) -> str:
    return "items.jsonl\x00../../etc/passwd"


ITEM_FILE_ATTACKS: dict[str, Callable[[Path], str]] = {
    "dot-dot": _dotdot,
    "absolute path outside": _absolute,
    "symlinked file": _file_link,
    "symlinked folder": _folder_link,
    "corral's home": _in_home,
    "home through dots": _home_via_dots,
    "fifo": _fifo,
    "system file": _system_file,
    "nul byte": _nul,
}


@pytest.mark.parametrize("attack", ITEM_FILE_ATTACKS.values(), ids=ITEM_FILE_ATTACKS.keys())
async def test_an_items_file_outside_the_working_folder_is_never_read(
    tmp_path: Path, attack: Callable[[Path], str]
) -> None:
    name = attack(tmp_path)
    args = fanout_args(1)
    del args["items"]
    async with open_served(tmp_path, reporter) as served:
        result = await served.client.call_tool("corral_fanout", {**args, "items_file": name})
        runs = (await served.client.call_tool("corral_runs", {})).structured_content
    assert "items_file" in refusal(result)
    assert runs == {"runs": []}


async def test_an_items_file_inside_the_working_folder_is_read(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "items.jsonl").write_text('{"n": 1}\n\n{"n": 2}\n')
    args = fanout_args(1, items_file="work/items.jsonl", wait_seconds=30)
    del args["items"]
    async with open_served(tmp_path, reporter) as served:
        result = await served.client.call_tool("corral_fanout", args)
    assert result.structured_content is not None
    assert result.structured_content["items"] == {"done": 2}


def _linked(link: Path, target: Path) -> str:
    link.symlink_to(target, target_is_directory=True)
    return link.name


def _made(folder: Path) -> str:
    folder.mkdir(exist_ok=True)
    return folder.name


FOLDER_ATTACKS: dict[str, Callable[[Path], str]] = {
    "dot-dot": lambda tmp: "..",
    "absolute outside": lambda tmp: str(_outside(tmp)),
    "symlink outside": lambda tmp: _linked(tmp / "away", _outside(tmp)),
    "corral's home": lambda tmp: _made(tmp / "home"),
    "root": lambda tmp: "/",
    "user's home": lambda tmp: "~",
}


@pytest.mark.parametrize("attack", FOLDER_ATTACKS.values(), ids=FOLDER_ATTACKS.keys())
@pytest.mark.parametrize("tool", ["corral_fanout", "corral_exec"])
async def test_a_working_folder_outside_the_allowed_roots_is_refused(
    tmp_path: Path, attack: Callable[[Path], str], tool: str
) -> None:
    folder = attack(tmp_path)
    args: dict[str, Any] = fanout_args(1) if tool == "corral_fanout" else {"task": "look"}
    async with open_served(tmp_path, reporter) as served:
        result = await served.client.call_tool(tool, {**args, "cwd": folder})
        runs = (await served.client.call_tool("corral_runs", {})).structured_content
    assert "cd " in refusal(result)
    assert runs == {"runs": []}


@pytest.mark.parametrize(
    ("own", "asked"),
    [
        (SandboxMode.READ_ONLY, "workspace-write"),
        (SandboxMode.READ_ONLY, "full-access"),
        (SandboxMode.WORKSPACE_WRITE, "full-access"),
    ],
)
async def test_a_sandbox_wider_than_the_servers_own_profile_is_refused(
    tmp_path: Path, own: SandboxMode, asked: str
) -> None:
    service = ServiceConfig(allowed_roots=(tmp_path,), max_sandbox=SandboxMode.FULL_ACCESS)
    async with open_served(tmp_path, reporter, service=service, sandbox_mode=own) as served:
        result = await served.client.call_tool("corral_fanout", fanout_args(1, sandbox=asked))
    assert f"sandbox {asked} is wider than" in refusal(result)


@pytest.mark.parametrize(
    "endpoint",
    [
        "{url}",
        "http://user:secret@{host}/v1",
        "https://api.openai.com.attacker.example/v1",
        "file:///etc/passwd",
    ],
)
async def test_a_model_endpoint_off_the_servers_allow_list_never_gets_the_key(
    tmp_path: Path, endpoint: str
) -> None:
    async with serve_model_server(reporter) as attacker:
        host = attacker.base_url.removeprefix("http://").removesuffix("/v1")
        asked = endpoint.format(url=attacker.base_url, host=host)
        async with open_served(tmp_path, reporter) as served:
            result = await served.client.call_tool("corral_fanout", fanout_args(1, base_url=asked))
        assert attacker.requests == []
    assert "base_url" in refusal(result)


@pytest.mark.parametrize(
    "extra",
    [
        {"config": ["sandbox_mode=full-access"]},
        {"cd": "/"},
        {"approval_policy": "on-request"},
        {"network_access": True},
        {"model_api_key_env": "HOME"},
    ],
)
async def test_fields_the_tools_do_not_take_are_refused_not_ignored(
    tmp_path: Path, extra: dict[str, Any]
) -> None:
    async with open_served(tmp_path, reporter) as served:
        result = await served.client.call_tool("corral_fanout", {**fanout_args(1), **extra})
    assert "Extra inputs are not permitted" in refusal(result)


@pytest.mark.parametrize(
    "uri",
    [
        "corral://runs/../../etc/passwd",
        "corral://runs/run-1/../../home",
        "file:///etc/passwd",
        "corral://runs/run-1/secrets",
    ],
)
async def test_a_resource_uri_that_is_no_run_is_an_error(tmp_path: Path, uri: str) -> None:
    async with open_served(tmp_path, reporter) as served:
        with pytest.raises(MCPError, match="unknown resource"):
            await served.client.read_resource(uri)


async def test_a_server_without_allowed_roots_reads_no_items_file(tmp_path: Path) -> None:
    (tmp_path / "items.jsonl").write_text(ITEM)
    args = fanout_args(1, items_file="items.jsonl")
    del args["items"]
    roots_elsewhere = ServiceConfig(allowed_roots=(_outside(tmp_path),))
    async with open_served(tmp_path, reporter, service=roots_elsewhere) as served:
        result = await served.client.call_tool("corral_fanout", args)
    assert "is not in [service] allowed_roots" in refusal(result)


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ({"repo": "..", "range": "HEAD~1..HEAD"}, "repo "),
        ({"repo": "/", "range": "HEAD~1..HEAD"}, "repo "),
        ({"repo": "repo", "range": "--output=/tmp/pwned..HEAD"}, "--output"),
        ({"repo": "repo", "range": "HEAD..--upload-pack=touch /tmp/pwned"}, "--upload-pack"),
    ],
)
async def test_a_review_outside_the_roots_or_with_git_options_is_refused(
    tmp_path: Path, extra: dict[str, Any], said: str
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "commit", "-q", "--allow-empty", "-m", "base")
    async with open_served(tmp_path, reporter) as served:
        result = await served.client.call_tool("corral_review", extra)
    assert said in refusal(result)
    assert not await anyio.Path("/tmp/pwned").exists()


@pytest.mark.parametrize("uri", ["file:///etc/passwd", "corral://runs/x/../../y", "corral://x"])
async def test_only_run_uris_can_be_subscribed_to(tmp_path: Path, uri: str) -> None:
    async with open_served(tmp_path, reporter, client={"mode": "legacy"}) as served:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # resources/subscribe is deprecated in 2026-07-28
            with pytest.raises(MCPError, match="unknown resource"):
                await served.client.subscribe_resource(uri)
