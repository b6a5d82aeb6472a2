"""`corral skills list|match` run as a real subprocess over the real skills in shared/."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from corral.orchestrator.services import MiniLMEmbedder, VectorCache
from corral.orchestrator.services.skills import SkillMatcher, SkillRoot, load_skills

from .._shared import shared_data

CLI_TIMEOUT = 50
# Embedding the real skills the first time takes seconds to tens of seconds on a busy machine;
# the module's runs share one vector cache, as a user's runs share theirs.
pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module", autouse=True)
def warm_vector_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("vectors")
    catalog = load_skills([SkillRoot(shared_data("skills"), "extra")])
    SkillMatcher(catalog, MiniLMEmbedder(cache=VectorCache(folder)))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CORRAL_CACHE_DIR", str(folder))
        yield folder


@pytest.fixture
def data() -> Path:
    return shared_data("skills")


def corral(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run `corral ARGS` from an empty folder, with a home that has no skills of its own."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(home), "CORRAL_HOME": str(home / ".corral")}
    return subprocess.run(
        [sys.executable, "-m", "corral", *args],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
        check=False,
    )


def test_match_json_prints_ranked_skills_best_first(tmp_path: Path, data: Path) -> None:
    done = corral(
        tmp_path,
        "skills",
        "match",
        "turn a PDF into Markdown",
        "--json",
        "--limit",
        "3",
        "--dir",
        str(data),
    )

    assert done.returncode == 0, done.stderr
    matches = json.loads(done.stdout)
    assert len(matches) == 3
    assert matches[0]["name"] == "markitdown"
    assert (
        Path(matches[0]["path"])
        == data / "K-Dense-AI__claude-scientific-skills/markitdown/SKILL.md"
    )
    scores = [m["score"] for m in matches]
    assert scores == sorted(scores, reverse=True)
    assert all(Path(m["path"]).name == "SKILL.md" and m["description"] for m in matches)


def test_list_json_prints_every_valid_skill_and_warns_about_broken_yaml_on_stderr(
    tmp_path: Path, data: Path
) -> None:
    broken = tmp_path / "mine" / "broken" / "SKILL.md"
    broken.parent.mkdir(parents=True)
    broken.write_text("---\nname: broken\ndescription: fine\nthis line has no colon\n---\n")

    done = corral(
        tmp_path, "skills", "list", "--json", "--dir", str(data), "--dir", str(tmp_path / "mine")
    )

    assert done.returncode == 0, done.stderr
    skills = json.loads(done.stdout)
    assert len(skills) == 145
    assert {"name", "path", "description"} <= skills[0].keys()
    assert [s["name"] for s in skills] == sorted(s["name"] for s in skills)
    assert "broken" not in {s["name"] for s in skills}
    assert (
        f"corral skills: warning: skipped {broken}: invalid YAML in the frontmatter at line 4: "
        "could not find expected ':'"
    ) in done.stderr.splitlines()
    over_limit = data / "anthropics__skills/claude-api/SKILL.md"
    cut = f"{over_limit}: `description` is 1068 characters long, past the limit of 1024"
    assert done.stderr.count(cut) == 1, "listed, cut, and warned about once"
    (claude_api,) = [s for s in skills if s["path"] == str(over_limit)]
    assert len(claude_api["description"]) <= 1024


def test_a_missing_dir_is_a_usage_error(tmp_path: Path) -> None:
    done = corral(tmp_path, "skills", "list", "--dir", str(tmp_path / "nowhere"))

    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"corral skills: error: --dir {tmp_path / 'nowhere'}: no such folder; "
        "give one that holds skills"
    )


def test_match_explain_says_which_ranker_and_field_put_a_skill_first(
    tmp_path: Path, data: Path
) -> None:
    done = corral(
        tmp_path, "skills", "match", "deplyo my site to vercel", "--explain", "--dir", str(data)
    )

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1] == "spelling:    deplyo -> deploy"
    assert any(line.startswith("embedded by: all-minilm-l6-v2") for line in lines)
    first = next(n for n, line in enumerate(lines) if line.startswith(" 1. "))
    assert lines[first].split()[1] == "deploy-to-vercel"
    assert lines[first + 2].strip().startswith("first stage: ")
    assert "bm25 #1" in lines[first + 2]
    # The second stage's parts: the request's cosine and the name's BM25 among them.
    assert lines[first + 3].strip().startswith("score ")
    assert "cosine " in lines[first + 3] and "bm25:name " in lines[first + 3]
    assert lines[first + 4].strip().startswith("bm25 by field: ")
