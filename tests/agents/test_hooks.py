"""Hooks are called through typed methods, each one containing the hook's exceptions."""

from __future__ import annotations

import logging

import pytest

from corral.agents import AgentStatus, CompositeHooks, RunnerHooks, SafeHooks, Waiting


class Broken(RunnerHooks):
    def turn_started(self, agent_id: str, turn: int) -> None:
        raise RuntimeError("hook bug")


class Recording(RunnerHooks):
    def __init__(self) -> None:
        self.seen: list[tuple[str, int, AgentStatus]] = []

    def turn_ended(self, agent_id: str, turn: int, status: AgentStatus) -> None:
        self.seen.append((agent_id, turn, status))


def test_a_hook_that_raises_is_logged_and_never_reaches_the_agent(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR):
        SafeHooks(Broken()).turn_started("agent-1", 0)
    assert "hook turn_started failed" in caplog.text
    assert "RuntimeError: hook bug" in caplog.text  # with the hook's traceback


class Interrupting(RunnerHooks):
    def turn_started(self, agent_id: str, turn: int) -> None:
        raise KeyboardInterrupt


def test_a_hook_interrupted_by_a_base_exception_is_not_swallowed() -> None:
    with pytest.raises(KeyboardInterrupt):
        SafeHooks(Interrupting()).turn_started("agent-1", 0)


def test_composite_hooks_reach_every_hook_even_after_one_fails() -> None:
    recording = Recording()
    hooks = CompositeHooks(Broken(), recording)
    hooks.turn_started("agent-1", 0)
    hooks.turn_ended("agent-1", 0, AgentStatus.COMPLETED)
    assert recording.seen == [("agent-1", 0, AgentStatus.COMPLETED)]


def test_the_waiting_state_compares_equal_to_its_old_string_names() -> None:
    assert str(Waiting.MODEL) == "model" and f"{Waiting.TOOLS}" == "tools"
    assert Waiting("compaction") is Waiting.COMPACTION
    assert Waiting.COMPACTION.busy and Waiting.DONE.idle and not Waiting.INPUT.busy
