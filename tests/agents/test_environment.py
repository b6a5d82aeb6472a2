from datetime import UTC, datetime
from pathlib import Path

import pytest

from corral.agents._environment import (
    EnvironmentContext,
    capture_environment,
    detect_shell,
    detect_timezone,
)
from corral.agents._fragments import ENVIRONMENT_CONTEXT, fragment_kind_of

BASE = EnvironmentContext(
    cwd=Path("/repo"), shell="zsh", current_date="2026-04-25", timezone="Europe/Berlin"
)


def test_full_render_follows_the_codex_layout() -> None:
    assert BASE.render() == (
        "<environment_context>\n"
        "  <cwd>/repo</cwd>\n"
        "  <shell>zsh</shell>\n"
        "  <current_date>2026-04-25</current_date>\n"
        "  <timezone>Europe/Berlin</timezone>\n"
        "</environment_context>"
    )


def test_full_render_lists_network_and_subagents() -> None:
    context = EnvironmentContext(
        cwd=Path("/repo"),
        shell="bash",
        current_date="2026-04-25",
        timezone="Etc/UTC",
        network=False,
        subagents=(("run1/a1", "Ada"), ("run1/a2", "Brian")),
    )

    assert context.render() == (
        "<environment_context>\n"
        "  <cwd>/repo</cwd>\n"
        "  <shell>bash</shell>\n"
        "  <current_date>2026-04-25</current_date>\n"
        "  <timezone>Etc/UTC</timezone>\n"
        '  <network enabled="false"/>\n'
        "  <subagents>\n"
        "    - run1/a1: Ada\n"
        "    - run1/a2: Brian\n"
        "  </subagents>\n"
        "</environment_context>"
    )
    assert fragment_kind_of(context.render()) is ENVIRONMENT_CONTEXT


def test_no_diff_when_nothing_the_model_needs_changed() -> None:
    changed_only_shell_and_children = EnvironmentContext(
        cwd=Path("/repo"),
        shell="fish",
        current_date="2026-04-25",
        timezone="Europe/Berlin",
        subagents=(("a1", "Ada"),),
    )

    assert BASE.render_diff(BASE) is None
    assert changed_only_shell_and_children.render_diff(BASE) is None


def test_date_rollover_sends_a_diff_without_the_unchanged_cwd() -> None:
    next_day = EnvironmentContext(
        cwd=Path("/repo"), shell="zsh", current_date="2026-04-26", timezone="Europe/Berlin"
    )

    assert next_day.render_diff(BASE) == (
        "<environment_context>\n"
        "  <shell>zsh</shell>\n"
        "  <current_date>2026-04-26</current_date>\n"
        "  <timezone>Europe/Berlin</timezone>\n"
        "</environment_context>"
    )


def test_cwd_and_network_changes_appear_in_the_diff_but_subagents_never_do() -> None:
    moved = EnvironmentContext(
        cwd=Path("/repo/sub"),
        shell="zsh",
        current_date="2026-04-25",
        timezone="Europe/Berlin",
        network=True,
        subagents=(("a1", "Ada"),),
    )

    assert moved.render_diff(BASE) == (
        "<environment_context>\n"
        "  <cwd>/repo/sub</cwd>\n"
        "  <shell>zsh</shell>\n"
        "  <current_date>2026-04-25</current_date>\n"
        "  <timezone>Europe/Berlin</timezone>\n"
        '  <network enabled="true"/>\n'
        "</environment_context>"
    )


def test_capture_uses_the_shell_basename_and_the_zone_of_tz(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SHELL", "/usr/bin/zsh")
    monkeypatch.setenv("TZ", "Pacific/Auckland")
    # 13:00 UTC is already the next day in Auckland.
    now = datetime(2026, 4, 25, 13, 0, tzinfo=UTC)

    context = capture_environment(tmp_path, now=now, network=None)

    assert context == EnvironmentContext(
        cwd=tmp_path, shell="zsh", current_date="2026-04-26", timezone="Pacific/Auckland"
    )


def test_capture_takes_a_naive_clock_reading_as_local_date(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TZ", "Etc/UTC")
    naive = datetime(2026, 12, 31, 23, 59)

    context = capture_environment(tmp_path, now=naive, network=True, subagents=(("a", "b"),))

    assert (context.current_date, context.network, context.subagents) == (
        "2026-12-31",
        True,
        (("a", "b"),),
    )


def test_shell_defaults_to_bash() -> None:
    assert detect_shell({}) == "bash"
    assert detect_shell({"SHELL": "/bin/fish"}) == "fish"


def test_timezone_sources_in_order(tmp_path: Path) -> None:
    (tmp_path / "timezone").write_text("America/Chicago\n")
    (tmp_path / "localtime").symlink_to("/usr/share/zoneinfo/Asia/Tokyo")

    assert detect_timezone({"TZ": ":Europe/Paris"}, etc=tmp_path) == "Europe/Paris"
    assert detect_timezone({"TZ": "not a zone"}, etc=tmp_path) == "America/Chicago"
    (tmp_path / "timezone").unlink()
    assert detect_timezone({}, etc=tmp_path) == "Asia/Tokyo"
    (tmp_path / "localtime").unlink()
    assert detect_timezone({}, etc=tmp_path) == "Etc/UTC"
