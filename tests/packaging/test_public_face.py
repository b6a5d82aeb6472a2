"""`corral`'s public face: the names a Python user starts from, and function tools."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

import corral
from corral.tools import InvalidInput, PermissionProfile, ToolContext

from ._sum_agent import add, policy


def context(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, profile=PermissionProfile.for_workspace("read-only", tmp_path))


def test_the_public_face_lists_what_it_exports() -> None:
    assert sorted(corral.__all__) == corral.__all__
    assert all(hasattr(corral, name) for name in corral.__all__)
    assert corral.__version__ == "0.1.0"


def test_a_function_tool_has_the_schema_of_its_annotations_and_the_text_of_its_docstring() -> None:
    tool = corral.function_tool(add)
    schema = tool.parameters_schema()
    assert (tool.name, tool.description) == ("add", "Adds two whole numbers.")
    assert schema["properties"] == {"a": {"type": "integer"}, "b": {"type": "integer"}}
    assert schema["required"] == ["a", "b"]


@pytest.mark.anyio
async def test_a_function_tool_answers_bad_arguments_and_its_own_errors_as_tool_errors(
    tmp_path: Path,
) -> None:
    def divide(a: float, b: float) -> float:
        return a / b

    tool = corral.function_tool(name="div")(divide)
    wrong = await tool.invoke(json.dumps({"a": "x", "b": 1}), context(tmp_path))
    crashed = await tool.invoke(json.dumps({"a": 1, "b": 0}), context(tmp_path))
    fine = await tool.invoke(json.dumps({"a": 1, "b": 4}), context(tmp_path))
    assert not wrong.success and "div" in wrong.text
    assert (crashed.success, crashed.text) == (
        False,
        "div failed: ZeroDivisionError: float division by zero",
    )
    assert (fine.success, fine.text) == (True, "0.25")


@pytest.mark.anyio
async def test_an_async_function_tool_returning_data_answers_json(tmp_path: Path) -> None:
    async def lookup(key: str, default: int = 0) -> dict[str, Any]:
        return {"key": key, "value": default}

    out = await corral.function_tool(lookup).invoke(
        '{"key": "k", "default": null}', context(tmp_path)
    )
    assert json.loads(out.text) == {"key": "k", "value": 0}


def test_a_function_without_annotations_is_refused_with_the_parameter_named() -> None:
    def untyped(x):  # type: ignore[no-untyped-def]
        return x

    with pytest.raises(InvalidInput, match="parameter 'x' needs a type annotation"):
        corral.function_tool(untyped)


@pytest.mark.anyio
async def test_run_agent_gives_the_model_the_callers_tool_and_journals_the_run(
    tmp_path: Path,
) -> None:
    env = {"CORRAL_HOME": str(tmp_path / "home")}
    async with corral.serve_model_server(policy) as server:
        env["CORRAL_BASE_URL"] = server.base_url
        outcome = await corral.run_agent("add 2 and 3", tools=[add], cwd=tmp_path, env=env)
        offered = [tool["name"] for tool in server.requests[0]["normalised"]["tools"]]
    assert outcome.finish.message == "the sum is 5"
    assert outcome.journal == str(tmp_path / "home" / "journal.sqlite")
    assert "add" in offered


@pytest.mark.anyio
async def test_two_tools_of_one_name_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="two tools are named 'add'"):
        await corral.run_agent(
            "x", tools=[add, add], cwd=tmp_path, env={"CORRAL_HOME": str(tmp_path)}
        )


@pytest.mark.anyio
async def test_run_agents_calls_a_tool_declared_quick_on_the_loops_own_thread(
    tmp_path: Path,
) -> None:
    threads: list[int] = []

    @corral.function_tool(name="add", blocking=False)
    def quick_add(a: int, b: int) -> int:
        threads.append(threading.get_ident())
        return a + b

    env = {"CORRAL_HOME": str(tmp_path / "home")}
    with anyio.fail_after(30):
        async with corral.serve_model_server(policy) as server:
            env["CORRAL_BASE_URL"] = server.base_url
            outcomes = await corral.run_agents(
                ["add 2 and 3", "again"], tools=[quick_add], cwd=tmp_path, env=env
            )
    assert [outcome.finish.message for outcome in outcomes] == ["the sum is 5"] * 2
    assert threads == [threading.get_ident()] * 2
