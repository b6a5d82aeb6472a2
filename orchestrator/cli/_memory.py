"""`corral memory list|show|forget|clear|consolidate`: what runs remember, and forgetting it.

Memories live where the journal does (`$CORRAL_HOME/journal.sqlite`, or the PostgreSQL
database `[journal] url` names), per project: the repository
root of the folder given with `--project` (default: the current folder). `consolidate` asks the
configured model to merge a project's raw memories into insights.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._json_out import json_text

if TYPE_CHECKING:
    from corral.agents import CorralConfig
    from corral.orchestrator.memory import Insight, MemoryRecord, MemoryStore

_TEXT_WIDTH = 100


def add_parser(sub: Any) -> None:
    memory = sub.add_parser("memory", help="list, show, forget or consolidate what runs remember")
    actions = memory.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="the project's memories and insights, newest first")
    _project_flags(listing)
    listing.set_defaults(handler=list_memories)
    show = actions.add_parser("show", help="one memory or insight, whole")
    show.add_argument("item_id", metavar="ID")
    show.add_argument("--json", action="store_true", help="print one JSON object")
    show.set_defaults(handler=show_memory)
    forget = actions.add_parser("forget", help="remove a memory (and the insights citing it)")
    forget.add_argument("item_id", metavar="ID")
    forget.add_argument("--json", action="store_true", help="print one JSON object")
    forget.set_defaults(handler=forget_memory)
    clear = actions.add_parser("clear", help="remove every memory and insight of the project")
    _project_flags(clear)
    clear.set_defaults(handler=clear_memories)
    merge = actions.add_parser("consolidate", help="merge the project's memories into insights")
    _project_flags(merge)
    merge.set_defaults(handler=consolidate_memories)


def _project_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--project",
        type=Path,
        metavar="DIR",
        help="a folder of the project (its repository root is the project; default: here)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")


MEMORIES_OFF = "; runs remember nothing while [memories] enabled is off (set it in config.toml)"


def _config() -> CorralConfig:
    from corral.agents import load_config

    return load_config(cwd=Path.cwd()).config


def _project(args: argparse.Namespace) -> str:
    from corral.orchestrator.memory import project_of
    from corral.tools import InvalidInput

    folder: Path = args.project or Path.cwd()
    if not folder.is_dir():
        raise InvalidInput(f"--project {folder}: no such folder; give a folder of the project")
    return project_of(folder)


@asynccontextmanager
async def _store(config: CorralConfig) -> AsyncIterator[MemoryStore]:
    from corral.agents import journal_target
    from corral.orchestrator.memory import open_memories

    async with open_memories(journal_target(config)) as store:
        yield store


async def list_memories(args: argparse.Namespace) -> int:
    project = _project(args)
    config = _config()
    async with _store(config) as store:
        insights = await store.insights(project)
        memories = await store.memories(project)
    if args.json:
        body = {
            "project": project,
            "insights": [_json(i) for i in insights],
            "memories": [_json(m) for m in memories],
        }
        print(json_text(body))
        return 0
    if not insights and not memories:
        off = "" if config.memories.enabled else MEMORIES_OFF
        print(f"no memories for {project}{off}")
        return 0
    print(f"project {project}: {len(insights)} insights, {len(memories)} memories")
    for insight in insights:
        print(f"{_spelled(insight.insight_id)}  insight  {_short(insight.text)}")
    for memory in memories:
        when = _when(memory.created_at)
        print(f"{_spelled(memory.memory_id)}  {when}  {_short(memory.text)}")
    return 0


async def show_memory(args: argparse.Namespace) -> int:
    from corral.orchestrator.memory import UnknownMemory

    async with _store(_config()) as store:
        item = await store.get(args.item_id)
    if item is None:
        raise UnknownMemory(f"no memory or insight {args.item_id}; see `corral memory list`")
    if args.json:
        print(json_text(_json(item)))
        return 0
    for name, value in _json(item).items():
        if name != "embedding":
            print(f"{name}: {_spelled(str(value))}")
    return 0


async def forget_memory(args: argparse.Namespace) -> int:
    from corral.orchestrator.memory import UnknownMemory

    async with _store(_config()) as store:
        if not await store.forget(args.item_id):
            raise UnknownMemory(f"no memory or insight {args.item_id}; see `corral memory list`")
    if args.json:
        print(json.dumps({"forgotten": args.item_id}))
    else:
        print(f"forgot {args.item_id}")
    return 0


async def clear_memories(args: argparse.Namespace) -> int:
    project = _project(args)
    async with _store(_config()) as store:
        gone = await store.clear(project)
    if args.json:
        print(json.dumps({"project": project, "cleared": gone}))
    else:
        print(f"cleared {gone} memories of {project}")
    return 0


async def consolidate_memories(args: argparse.Namespace) -> int:
    from corral.agents import model_settings_from_config, open_model_client
    from corral.orchestrator.memory import MemoryService

    project = _project(args)
    config = _config()
    client = open_model_client(model_settings_from_config(config, os.environ))
    try:
        async with _store(config) as store:
            service = MemoryService.for_config(store, config, os.environ)
            insights = await service.consolidate(project, client, config.model)
    finally:
        await client.aclose()
    if args.json:
        print(json_text([_json(i) for i in insights]))
    else:
        print(f"{len(insights)} insights for {project}")
        for insight in insights:
            print(f"{_spelled(insight.insight_id)}  {_short(insight.text)}")
    return 0


def _json(item: MemoryRecord | Insight) -> dict[str, Any]:
    return item.model_dump(mode="json", exclude={"embedding"})


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return _spelled(flat if len(flat) <= _TEXT_WIDTH else flat[: _TEXT_WIDTH - 1] + "…")


def _spelled(text: str) -> str:
    """A memory's text is a model's answer to files anyone may have written: what a terminal
    would act on (escape sequences, bidi overrides) is spelled out, as in approval questions."""
    from ._approval import shown

    return shown(text)


def _when(timestamp: float) -> str:
    try:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp))
    except (OverflowError, ValueError, OSError):  # a copied journal's impossible date
        return "undated"
