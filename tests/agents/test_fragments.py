import pytest

from corral.agents._fragments import (
    ALL_KINDS,
    COMPACTION_SUMMARY,
    ENVIRONMENT_CONTEXT,
    PERMISSIONS,
    SUMMARIZATION_PROMPT,
    TOOL_CALL_INTERRUPTED,
    TURN_ABORTED,
    USER_INSTRUCTIONS,
    FragmentKind,
    compaction_summary_fragment,
    fragment_kind_of,
    is_contextual,
    tool_call_interrupted_fragment,
    turn_aborted_fragment,
)


@pytest.mark.parametrize("kind", ALL_KINDS, ids=lambda kind: kind.name)
def test_every_kind_is_recognised_from_its_own_rendering(kind: FragmentKind) -> None:
    rendered = kind.render("\nsome body\n")

    assert rendered.startswith(kind.start) and rendered.endswith(kind.end)
    assert fragment_kind_of(rendered) is kind
    assert is_contextual(f"\n  {rendered}  \n")


def test_kind_names_and_markers_are_unique() -> None:
    assert len({kind.name for kind in ALL_KINDS}) == len(ALL_KINDS)
    assert len({kind.start.lower() for kind in ALL_KINDS}) == len(ALL_KINDS)


def test_render_adds_no_separators() -> None:
    assert ENVIRONMENT_CONTEXT.render("x") == "<environment_context>x</environment_context>"
    assert PERMISSIONS.start == "<permissions instructions>"
    assert PERMISSIONS.role == "developer" and ENVIRONMENT_CONTEXT.role == "user"


def test_markers_match_ascii_case_insensitively() -> None:
    assert fragment_kind_of("<ENVIRONMENT_CONTEXT>\n</Environment_Context>") is ENVIRONMENT_CONTEXT
    assert fragment_kind_of("# agents.md INSTRUCTIONS for /repo\n</instructions>") is (
        USER_INSTRUCTIONS
    )


def test_plain_user_text_is_not_contextual() -> None:
    assert not is_contextual("please fix the failing test in <skill> parsing")
    assert not is_contextual("<environment_context> without an end")
    assert not is_contextual("")
    assert fragment_kind_of("what does </turn_aborted> mean?") is None


def test_unmarked_kind_never_matches() -> None:
    unmarked = FragmentKind(name="hook", role="developer", start="", end="")

    assert not unmarked.matches("anything")


def test_turn_aborted_fragment_is_marked_guidance() -> None:
    text = turn_aborted_fragment()

    assert fragment_kind_of(text) is TURN_ABORTED
    assert "stopped" in text and "partly" in text


def test_interrupted_tool_call_names_the_call_and_says_the_outcome_is_unknown() -> None:
    text = tool_call_interrupted_fragment("call_42", "shell")

    assert fragment_kind_of(text) is TOOL_CALL_INTERRUPTED
    assert "`call_42`" in text and "`shell`" in text
    assert "outcome is unknown" in text and "check" in text
    assert "{{" not in text


def test_compaction_summary_puts_a_preface_before_the_summary() -> None:
    text = compaction_summary_fragment("  Edited a.py; tests pass.\n")

    assert fragment_kind_of(text) is COMPACTION_SUMMARY
    assert "Another model wrote the" in text
    assert text.endswith("\n\nEdited a.py; tests pass.\n</compaction_summary>")


def test_empty_compaction_summary_says_so() -> None:
    assert "(no summary available)" in compaction_summary_fragment("   ")


def test_summarization_prompt_asks_for_a_handoff_summary() -> None:
    for topic in ("done so far", "decisions", "constraints", "next steps", "references"):
        assert topic in SUMMARIZATION_PROMPT
