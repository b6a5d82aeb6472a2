"""`--help` of every command: it opens with examples that parse, and loads no heavy module.

Speed is measured in benchmarks, not here: what is checked is the cause of a slow `--help`,
an import of the agent core, the model or MCP SDKs, numpy or the HTTP server.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

import pytest

from corral.agents import ROLES
from corral.orchestrator import fanout
from corral.orchestrator.cli import _fanout, _refactor, _review, _tools
from corral.orchestrator.cli._common import EXECUTOR_CHOICES
from corral.orchestrator.cli._exec import ROLES as EXEC_ROLES
from corral.orchestrator.cli._help import EXAMPLES, SUMMARIES
from corral.orchestrator.cli._main import _MODULES, build_parser
from corral.orchestrator.pipelines import refactor, review
from corral.orchestrator.pipelines.review import Severity
from corral.orchestrator.runs import EXECUTOR_KINDS
from corral.orchestrator.services import toolsearch

HEAVY = ("openai", "mcp", "numpy", "wordllama", "starlette", "temporalio", "corral.agents")
TIMEOUT = 60
COMMANDS = ["", *_MODULES]

PROBE = """
import contextlib, io, json, sys
from corral.orchestrator.cli._main import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    try:
        main(sys.argv[1:])
    except SystemExit:
        pass
print(json.dumps({"help": out.getvalue(), "modules": sorted(sys.modules)}))
"""


def probe(command: str) -> dict[str, object]:
    argv = [command, "--help"] if command else ["--help"]
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
    answer: dict[str, object] = json.loads(result.stdout)
    return answer


@pytest.mark.parametrize("command", COMMANDS, ids=[c or "corral" for c in COMMANDS])
def test_help_opens_with_examples_and_imports_nothing_heavy(command: str) -> None:
    answer = probe(command)
    text = str(answer["help"])
    assert text.split("\n\n")[1].startswith("examples:\n  corral ")
    modules = answer["modules"]
    assert isinstance(modules, list)
    loaded = [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]
    assert loaded == []


EXAMPLE_LINES = [(name, line) for name, lines in EXAMPLES.items() for line in lines]


@pytest.mark.parametrize(("name", "line"), EXAMPLE_LINES, ids=[line for _, line in EXAMPLE_LINES])
def test_every_example_parses_with_the_real_parser(name: str, line: str) -> None:
    argv = shlex.split(line.split(" > ")[0].split(" < ")[0])[1:]
    build_parser(argv).parse_args(argv)


def test_every_command_has_a_summary_and_examples() -> None:
    assert set(_MODULES) <= set(SUMMARIES)
    assert set(_MODULES) <= set(EXAMPLES)


def test_the_values_spelled_out_for_speed_match_their_sources() -> None:
    assert EXEC_ROLES == ROLES
    assert set(EXECUTOR_CHOICES) == set(EXECUTOR_KINDS)
    assert tuple(s.value for s in Severity) == _review.SEVERITIES
    assert _review.DEFAULT_MAX_UNIT_LINES == review.DEFAULT_MAX_UNIT_LINES
    assert _fanout.DEFAULT_MAX_RESULT_TRIES == fanout.DEFAULT_MAX_RESULT_TRIES
    assert _refactor.DEFAULT_CONCURRENCY == refactor.DEFAULT_CONCURRENCY
    assert _refactor.DEFAULT_MAX_ATTEMPTS == refactor.DEFAULT_MAX_ATTEMPTS
    assert _tools.DEFAULT_LIMIT == toolsearch.DEFAULT_LIMIT
