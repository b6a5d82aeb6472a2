"""Tools made from the caller's own Python functions: `function_tool(fn)`.

The argument model comes from the function's signature (pydantic validates every call), the
description from its docstring. The function is code from outside, so this is its containment
boundary: whatever it raises becomes a tool error the model reads, never an exception in the run.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable
from typing import Any, overload

import anyio.to_thread
from pydantic import BaseModel, ConfigDict, create_model

from ._errors import InvalidInput
from ._registry import Tool, ToolContext, ToolOutput


class _FunctionArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


@overload
def function_tool(
    fn: Callable[..., Any],
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    mutating: bool = True,
    blocking: bool = True,
) -> Tool[Any]: ...


@overload
def function_tool(
    *,
    name: str | None = None,
    description: str | None = None,
    mutating: bool = True,
    blocking: bool = True,
) -> Callable[[Callable[..., Any]], Tool[Any]]: ...


def function_tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    mutating: bool = True,
    blocking: bool = True,
) -> Tool[Any] | Callable[[Callable[..., Any]], Tool[Any]]:
    """A tool that calls `fn` (sync or async) with the model's arguments.

    Every parameter needs a type annotation; the result is sent to the model as text (strings
    as they are, anything else as JSON). `mutating=False` lets calls share a turn with other
    read-only tools. A sync `fn` runs in a worker thread, since one that blocks on the event
    loop stalls every agent of the process; `blocking=False` declares it quick (pure
    computation of well under a millisecond, no I/O, no locks) and calls it on the loop's own
    thread, without the hop. Async functions always run on the loop. Usable bare
    (`@function_tool`), with options (`@function_tool(name=...)`) or on a function
    (`function_tool(fn, blocking=False)`).
    """

    def build(target: Callable[..., Any]) -> Tool[Any]:
        call = _call_inline if not blocking else _call
        return _tool_from(target, name or target.__name__, description, mutating, call)

    return build if fn is None else build(fn)


_Caller = Callable[[Callable[..., Any], str, dict[str, Any]], Awaitable[ToolOutput]]


def _tool_from(
    fn: Callable[..., Any], name: str, description: str | None, mutating: bool, call: _Caller
) -> Tool[Any]:
    args = _args_model(fn, name)
    text = description or inspect.getdoc(fn) or f"Calls the Python function {name}."

    async def handler(parsed: BaseModel, ctx: ToolContext) -> ToolOutput:
        del ctx
        return await call(fn, name, parsed.model_dump())

    return Tool(name, text, args, handler, mutating=mutating, parallel=not mutating)


def _args_model(fn: Callable[..., Any], name: str) -> type[BaseModel]:
    fields: dict[str, Any] = {}
    for param in inspect.signature(fn, eval_str=True).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise InvalidInput(f"tool {name}: *{param.name} cannot be offered to a model")
        if param.annotation is inspect.Parameter.empty:
            raise InvalidInput(f"tool {name}: parameter {param.name!r} needs a type annotation")
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (param.annotation, default)
    return create_model(f"{name}_args", __base__=_FunctionArgs, **fields)


async def _call(fn: Callable[..., Any], name: str, kwargs: dict[str, Any]) -> ToolOutput:
    try:
        if inspect.iscoroutinefunction(fn):
            result = await fn(**kwargs)
        else:
            result = await anyio.to_thread.run_sync(lambda: fn(**kwargs))
    except Exception as exc:  # the containment boundary for the caller's own code
        return _failed(name, exc)
    return _output(result)


async def _call_inline(fn: Callable[..., Any], name: str, kwargs: dict[str, Any]) -> ToolOutput:
    """`_call` for a sync tool declared quick: on the loop's thread, no hop to a worker."""
    if inspect.iscoroutinefunction(fn):
        return await _call(fn, name, kwargs)
    try:
        result = fn(**kwargs)
    except Exception as exc:  # the containment boundary for the caller's own code
        return _failed(name, exc)
    return _output(result)


def _failed(name: str, exc: Exception) -> ToolOutput:
    return ToolOutput.error(f"{name} failed: {type(exc).__name__}: {exc}")


def _output(result: Any) -> ToolOutput:
    if isinstance(result, ToolOutput):
        return result
    text = result if isinstance(result, str) else json.dumps(result, default=str)
    return ToolOutput(text)
