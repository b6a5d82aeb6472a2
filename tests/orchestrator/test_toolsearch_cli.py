"""`corral tools search` as a user runs it: its output and exit code, the JSON from a real
subprocess, the refusals from the CLI entry point in-process."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from corral.orchestrator.cli._main import main
from corral.orchestrator.services import MiniLMEmbedder, VectorCache
from corral.orchestrator.services._query_adapter import ADAPTER_FILE
from corral.orchestrator.services.toolsearch import ToolIndex, load_catalog

from .._shared import shared_data

DEADLINE = 45.0
# Embedding the 645 real tools the first time takes half a minute or more on a busy machine;
# the module's tests share one vector cache, warmed once, as a user's runs share theirs.
pytestmark = pytest.mark.timeout(240)


def shared_tools() -> Path:
    return shared_data("tools")


@pytest.fixture(scope="module", autouse=True)
def warm_vector_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("vectors")
    ToolIndex(load_catalog(shared_tools()), MiniLMEmbedder(cache=VectorCache(folder)))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CORRAL_CACHE_DIR", str(folder))
        yield folder


async def corral(*args: str, home: Path) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "CORRAL_HOME": str(home)}
    with anyio.fail_after(DEADLINE):
        return await anyio.run_process(
            [sys.executable, "-m", "corral", "tools", "search", *args],
            cwd=home,
            env=env,
            check=False,
        )


@pytest.mark.anyio
async def test_json_lists_ranked_tools_with_name_server_tool_and_score(tmp_path: Path) -> None:
    query = "create a pull request on github"

    done = await corral(
        query, "--json", "--limit", "5", "--catalog", str(shared_tools()), home=tmp_path
    )

    assert done.returncode == 0, done.stderr.decode()
    hits = json.loads(done.stdout)
    assert len(hits) == 5
    assert all({"name", "server", "tool", "score"} <= hit.keys() for hit in hits)
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    pr = next(h for h in hits if h["name"] == "mcp__github__create_pull_request")
    assert (pr["server"], pr["tool"]) == ("github", "create_pull_request")


def test_a_blank_query_exits_2_and_says_what_to_give(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path))

    code = main(["tools", "search", "   ", "--catalog", str(shared_tools())])

    assert code == 2
    assert capsys.readouterr().err.strip() == (
        "corral tools: error: tool_search needs a query: describe what you want to do"
    )


def test_without_servers_or_catalog_it_says_there_is_nothing_to_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)

    code = main(["tools", "search", "send a slack message"])

    out = capsys.readouterr()
    assert code == 2
    assert "no MCP servers are configured and no --catalog was given" in out.err
    assert out.out == ""


def test_explain_shows_the_corrected_query_and_why_each_tool_ranked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path))
    query = "mrege the pull request"

    code = main(
        ["tools", "search", query, "--explain", "--limit", "2", "--catalog", str(shared_tools())]
    )

    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert out[:2] == ["query words: merge the pull request", "spelling:    mrege -> merge"]
    # Which model embedded the request, and through which adapter: a fallback would show here.
    (embedded,) = [line for line in out if line.startswith("embedded by: ")]
    assert "all-minilm-l6-v2" in embedded and "with query adapter " in embedded
    first = out.index(next(line for line in out if line.startswith(" 1. ")))
    assert "mcp__github__merge_pull_request" in out[first]
    assert out[first + 2].strip().startswith("first stage: ")
    assert "bm25 #" in out[first + 2] and "embedding #" in out[first + 2]
    assert out[first + 3].strip().startswith("score ")
    assert "cosine:name " in out[first + 3] and "cosine:server " in out[first + 3]
    assert out[first + 4].strip().startswith("bm25 by field: ")
    assert "name " in out[first + 4] and "embedding cosine" in out[first + 4]


@pytest.mark.anyio
async def test_json_explain_gives_each_hit_its_ranker_and_field_parts(tmp_path: Path) -> None:
    done = await corral(
        "merge the pull request",
        "--json",
        "--explain",
        "--limit",
        "3",
        "--catalog",
        str(shared_tools()),
        home=tmp_path,
    )

    assert done.returncode == 0, done.stderr.decode()
    hits = json.loads(done.stdout)
    assert len(hits) == 3
    why = hits[0]["explain"]
    assert set(why) == {
        "rankers",
        "bm25_fields",
        "embedding_cosine",
        "embedding_model",
        "rerank",
        "query_words",
        "corrections",
        "translations",
        "synonyms",
        "expanded",
        "recognized",
        "embedded_text",
    }
    parts = sum(why["rerank"].values())
    assert parts == pytest.approx(hits[0]["score"], abs=1e-4)
    assert why["rankers"]["bm25"]["rank"] >= 1
    assert why["bm25_fields"]["name"] > 0
    assert why["embedding_model"].endswith(f"with query adapter {_shipped_adapter_digest()}")


@pytest.mark.anyio
async def test_explain_names_each_identifier_it_recognized_and_what_was_embedded(
    tmp_path: Path,
) -> None:
    request = "who originates 104.16.0.0/13"
    common = ("--explain", "--limit", "1", "--catalog", str(shared_tools()))
    shown = await corral(request, *common, home=tmp_path)
    done = await corral(request, "--json", *common, home=tmp_path)

    assert shown.returncode == 0, shown.stderr.decode()
    assert "recognized:  104.16.0.0/13 -> ip prefix" in shown.stdout.decode().splitlines()
    why = json.loads(done.stdout)[0]["explain"]
    assert why["recognized"] == {"104.16.0.0/13": "ip prefix"}
    assert why["embedded_text"] == f"{request} ip prefix"
    assert why["synonyms"] == ["ip", "prefix"]


def _shipped_adapter_digest() -> str:
    return hashlib.sha256(ADAPTER_FILE.read_bytes()).hexdigest()[:16]
