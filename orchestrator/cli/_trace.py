"""`corral trace RUN`: the run's agent tree from the journal, with time, turns, tokens and cost.

It reads only the journal, so it works without any tracing backend; its totals are the ones
`corral status` shows.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._json_out import json_text

if TYPE_CHECKING:
    from corral.agents import Store


def add_parser(sub: Any) -> None:
    trace = sub.add_parser("trace", help="print a run's agent tree with time, tokens and cost")
    trace.add_argument("run_id", metavar="RUN")
    trace.add_argument("--json", action="store_true", help="print one JSON object")
    trace.set_defaults(handler=show_trace)


async def show_trace(args: argparse.Namespace) -> int:
    from corral.agents import journal_target, load_config
    from corral.observability import build_trace_tree, format_trace_tree

    from .._inspect import read_status
    from ._status import format_status, open_journal_of, refuse_an_agent_id

    journal = journal_target(load_config(cwd=Path.cwd()).config)
    async with open_journal_of(args.run_id, journal) as store:
        await refuse_an_agent_id(store, args.run_id)
        status = await read_status(store, args.run_id)
        turns = {a.agent_id: await _turns(store, a.agent_id) for a in status.agents}
    roots = build_trace_tree(status.agents, turns)
    if args.json:
        data = {"run_id": status.run.run_id, "totals": status.totals()}
        print(json_text({**data, "agents": [r.to_json() for r in roots]}))
        return 0
    from ._approval import shown_lines

    header = format_status(status).splitlines()[:2]
    # Names, roles and errors are a model's, a tool's or a copied journal's text.
    print(shown_lines("\n".join([*header, *format_trace_tree(roots)])))
    return 0


async def _turns(store: Store, agent_id: str) -> int:
    from corral.observability import TURN_KIND

    return sum(1 for event in await store.events(agent_id) if event.kind == TURN_KIND)
