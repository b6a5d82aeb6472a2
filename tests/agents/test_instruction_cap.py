import hashlib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from corral.agents import (
    AgentSpec,
    CorralConfig,
    InstructionsTooLong,
    ModelSettings,
    base_instructions,
    build_turn_context,
    prompt_version,
    spec_from_config,
)
from corral.tools import InvalidInput, PermissionProfile

NOW = datetime(2026, 12, 1, tzinfo=UTC)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


def spec_in(repo: Path, instructions: str = "base", **config: object) -> AgentSpec:
    settings = CorralConfig.model_validate({"home": repo.parent / "home", **config})
    return spec_from_config(
        settings,
        agent_id="a1",
        run_id="r1",
        cwd=repo,
        model=ModelSettings(model="gpt-5.4-mini", base_url="http://127.0.0.1:9/v1"),
        instructions=instructions,
        tools=(),
        profile=PermissionProfile(),
    )


def context_of(spec: AgentSpec) -> None:
    build_turn_context(spec, now=NOW)


def test_instructions_within_the_cap_are_sent(repo: Path) -> None:
    (repo / "AGENTS.md").write_text("rule\n" * 100)

    context_of(spec_in(repo, instructions_max_tokens=200))


def test_the_agents_md_that_pushes_past_the_cap_is_named(repo: Path) -> None:
    (repo / "AGENTS.md").write_text("rule\n" * 100)  # 500 bytes: 125 tokens

    with pytest.raises(InstructionsTooLong) as raised:
        context_of(spec_in(repo, "b" * 400, instructions_max_tokens=150))

    message = str(raised.value)
    assert isinstance(raised.value, InvalidInput), "a mistake the user fixes: exit code 2"
    assert f"{repo / 'AGENTS.md'} (125 tokens)" in message
    assert "225 tokens, over the 150-token cap (`instructions_max_tokens`)" in message


@pytest.mark.parametrize(
    ("config", "named"),
    [
        ({"developer_instructions": "d" * 800}, "`developer_instructions` in the config"),
        ({"user_instructions": "u" * 800}, "`user_instructions` in the config"),
        ({}, "the base instructions"),
    ],
)
def test_each_kind_of_source_is_named_when_it_crosses_the_cap(
    repo: Path, config: dict[str, object], named: str
) -> None:
    base = "b" * (800 if not config else 40)

    with pytest.raises(InstructionsTooLong, match=named):
        context_of(spec_in(repo, base, instructions_max_tokens=100, **config))


def test_blocks_dropped_by_their_conditions_do_not_count(repo: Path) -> None:
    (repo / "AGENTS.md").write_text("@if language=rust\n" + "rule\n" * 400 + "@endif\nshort")

    context_of(spec_in(repo, instructions_max_tokens=100))


def test_the_default_cap_is_8192_tokens() -> None:
    assert CorralConfig().instructions_max_tokens == 8_192


SHIPPED = base_instructions("gpt-5.4-mini", "general", "pragmatic")


@pytest.mark.parametrize("size", [30 * 1024, 32 * 1024, 40_000])
def test_an_agents_md_codex_would_send_passes_the_default_cap_beside_corrals_own_base(
    repo: Path, size: int
) -> None:
    # Codex sends up to `project_doc_max_bytes` (32 KiB) of it: so does corral, cut there
    # with a marker, and corral's shipped base instructions are its own text, not counted.
    (repo / "AGENTS.md").write_text("x" * (size - 1) + "\n")

    context_of(spec_in(repo, SHIPPED))


def test_a_global_agents_md_beside_a_full_project_one_goes_past_the_default_cap(
    repo: Path,
) -> None:
    home = repo.parent / "home"
    home.mkdir()
    (home / "AGENTS.md").write_text("Answer in English.\n" * 20)
    (repo / "AGENTS.md").write_text("x" * 40_000)

    with pytest.raises(InstructionsTooLong, match=f"{repo / 'AGENTS.md'} \\(8,192 tokens\\)"):
        context_of(spec_in(repo, SHIPPED))


def test_base_instructions_of_ones_own_count_against_the_cap(repo: Path) -> None:
    (repo / "AGENTS.md").write_text("x" * 30 * 1024)

    with pytest.raises(InstructionsTooLong, match="took them past it"):
        context_of(spec_in(repo, SHIPPED + "\nAlso: " + "y" * 4096))


def test_the_prompt_version_is_the_sha256_of_the_base_instructions() -> None:
    text = base_instructions("gpt-5.4-mini", "general", "pragmatic")

    version = prompt_version(text)

    assert version == "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    assert version != prompt_version(base_instructions("gpt-5.4-mini", "reviewer", "pragmatic"))
