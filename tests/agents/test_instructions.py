import pytest

from corral.agents._instructions import (
    PERSONALITIES,
    ROLES,
    base_instructions,
    model_family,
    personality_text,
    resolve_base_instructions,
)
from corral.tools._errors import InvalidInput


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("personality", PERSONALITIES)
def test_every_role_renders_without_the_placeholder(role: str, personality: str) -> None:
    text = base_instructions("gpt-5.4", role, personality)

    assert len(text) > 1000
    assert "{{" not in text and "}}" not in text
    assert "\n\n\n" not in text


def test_personality_text_fills_the_slot_after_the_opening() -> None:
    text = base_instructions("gpt-5.4", "general", "friendly")
    opening, rest = text.split("\n\n", 1)

    assert opening.startswith("You are a coding agent")
    assert rest.startswith(personality_text("friendly"))
    assert personality_text("friendly").startswith("# Personality")


def test_no_personality_leaves_no_gap() -> None:
    text = base_instructions("gpt-5.4", "reviewer", "none")

    assert "# Personality" not in text
    assert text.split("\n\n", 1)[1].startswith("# What to look for")


def test_general_prompt_covers_the_working_tools() -> None:
    text = base_instructions("any-model")

    for tool in ("update_plan", "apply_patch", "shell", "read_file", "grep", "list_dir"):
        assert f"`{tool}`" in text
    assert "# Personality" in text  # pragmatic is the default


def test_role_prompts_name_their_own_tools() -> None:
    supervisor = base_instructions("m", "supervisor")
    for tool in ("spawn_agent", "wait_agent", "<subagent_notification>"):
        assert tool in supervisor
    assert "disjoint write set" in supervisor
    assert "report_result" in base_instructions("m", "reviewer")
    assert "report_result" in base_instructions("m", "triager")


def test_unknown_role_names_the_allowed_ones() -> None:
    with pytest.raises(InvalidInput, match="unknown role 'poet'; choose one of: general, super"):
        base_instructions("gpt-5.4", "poet")


def test_unknown_personality_names_the_allowed_ones() -> None:
    with pytest.raises(InvalidInput, match="none, friendly, pragmatic"):
        base_instructions("gpt-5.4", "general", "grumpy")


def test_unknown_models_fall_back_to_the_default_family() -> None:
    assert model_family("some-local-model") == "default"
    assert model_family("acme/some-local-model") == "default"
    assert base_instructions("llama3:8b") == base_instructions("gpt-5.4")


def test_family_is_the_longest_matching_prefix() -> None:
    families = ("gpt-5", "gpt-5.4", "gpt-5.4-mini", "default")

    assert model_family("gpt-5.4-mini-2026", families=families) == "gpt-5.4-mini"
    assert model_family("gpt-5.4", families=families) == "gpt-5.4"
    assert model_family("gpt-5.1", families=families) == "gpt-5"
    assert model_family("gpt-4o", families=families) == "default"


def test_one_namespace_segment_is_stripped_before_giving_up() -> None:
    families = ("gpt-5.4", "openrouter")

    assert model_family("custom/gpt-5.4-codex", families=families) == "gpt-5.4"
    assert model_family("openrouter/gpt-9", families=families) == "openrouter"
    assert model_family("a/b/gpt-5.4", families=families) == "default"
    assert model_family("bad-ns!/gpt-5.4", families=families) == "default"


def test_override_beats_journal_beats_default() -> None:
    default = base_instructions("gpt-5.4", "general", "pragmatic")

    def resolve(override: str | None, journaled: str | None) -> str:
        return resolve_base_instructions(
            override=override,
            journaled=journaled,
            model="gpt-5.4",
            role="general",
            personality="pragmatic",
        )

    assert resolve("from config", "from journal") == "from config"
    assert resolve(None, "from journal") == "from journal"
    assert resolve(None, None) == default
