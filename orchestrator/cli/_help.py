"""What `--help` shows before the flags: each command's one-line summary and its examples.

The summaries let `corral --help` list every command without importing any command's module
(their imports are what makes start-up slow); the examples open every command's own `--help`,
the way `gh` does. A test parses each example with the real parser, so none can go stale.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

SUMMARIES: Mapping[str, str] = {
    "demo": "triage issues and review a change offline",
    "exec": "run one agent on a task to completion",
    "fanout": "run one worker per item of a JSONL file",
    "resume": "carry on a run or agent that was stopped",
    "review": "review a git range or a patch with parallel agents",
    "refactor": "refactor a repository with parallel workers",
    "triage": "label, classify and deduplicate issues",
    "status": "show a run's agents and items with tokens and cost",
    "runs": "list the runs in the journal, newest first",
    "export": "write a run's whole journal as JSON lines",
    "trace": "print a run's agent tree with time, tokens and cost",
    "doctor": "check the journal for damage and say how to recover",
    "journal": "migrate a journal, copy runs between journals, or delete a run",
    "model-server": "run the scripted OpenAI-compatible model server",
    "apply-patch": "apply a patch read from stdin to the current directory",
    "mcp": "the MCP servers of the config",
    "mcp-server": "serve corral's runs as MCP tools to other agents (stdio or HTTP)",
    "tools": "inspect the tools agents can use",
    "skills": "list the skills found here, or rank them for a task",
    "memory": "list, show, forget or consolidate what runs remember",
    "serve": "serve the HTTP API: submit, watch and cancel runs",
    "worker": "run a corral worker for a Temporal server",
    "trust": "trust a project's .corral/config.toml to widen power (sandbox, MCP servers, ...)",
}

EXAMPLES: Mapping[str, tuple[str, ...]] = {
    "": (
        'corral exec "add a --verbose flag to cli.py and test it"',
        "corral review --range origin/main..HEAD --model gpt-5.4-mini",
    ),
    "demo": ("corral demo", "corral demo --out ./corral-demo"),
    "exec": (
        'corral exec "add a --verbose flag to cli.py and test it"',
        'corral exec --base-url http://127.0.0.1:8000/v1 --api chat --model qwen3-coder "fix #12"',
    ),
    "fanout": (
        'corral fanout --items files.jsonl --template "Summarise {path}" --schema summary.json',
        "corral fanout --items repos.jsonl --template @task.md --schema result.json --run-id n1",
        "corral fanout --items many.jsonl --template @task.md --schema result.json "
        "--concurrency 256 --processes 2",
    ),
    "resume": (
        "corral resume run-2b4a70ee87b1",
        'corral resume run-2b4a70ee87b1 "now add tests"',
        "corral resume run-2b4a70ee87b1 --processes 2",
    ),
    "review": (
        "corral review --range origin/main..HEAD --model gpt-5.4-mini",
        "corral review --patch change.patch --format md,sarif --fail-on medium",
    ),
    "refactor": (
        'corral refactor --repo . --instruction "Use the module\'s logger, not print()" '
        "--files 'src/*.py' --check 'python3 -m pytest -q'",
    ),
    "triage": (
        "corral triage --issues issues.json --labels labels.json --model gpt-5.4-mini",
        "corral triage --issues issues.jsonl --labels labels.yaml --concurrency 8",
    ),
    "status": ("corral status run-2b4a70ee87b1", "corral status run-2b4a70ee87b1 --json"),
    "runs": ("corral runs", "corral runs --limit 5 --status failed"),
    "export": (
        "corral export run-2b4a70ee87b1 > run.jsonl",
        "corral export run-2b4a70ee87b1 --out run.jsonl",
    ),
    "trace": ("corral trace run-2b4a70ee87b1", "corral trace run-2b4a70ee87b1 --json"),
    "doctor": ("corral doctor",),
    "journal": (
        "corral journal migrate --url postgresql://corral@db.internal/corral",
        "corral journal copy --from sqlite:~/.corral/journal.sqlite "
        "--to postgresql://corral@db.internal/corral",
        "corral journal delete run-2b4a70ee87b1",
    ),
    "model-server": ("corral model-server --policy policy.py:answer --port 8000",),
    "apply-patch": ("corral apply-patch < change.patch",),
    "mcp": ("corral mcp list", "corral mcp list --json"),
    "mcp-server": ("corral mcp-server", "corral mcp-server --http --port 8421"),
    "tools": ('corral tools search "create a calendar event"',),
    "skills": ("corral skills list", 'corral skills match "write release notes"'),
    "memory": ("corral memory list --project .", "corral memory forget mem-2b4a70ee87b1"),
    "serve": ("corral serve", "corral serve --host 127.0.0.1 --port 8420"),
    "worker": ("corral worker --temporal-address 127.0.0.1:7233",),
    "trust": ("corral trust .", "corral trust --list"),
}


def add_summaries(sub: Any, names: list[str]) -> None:
    """Register `names` by their summaries only: enough for `corral --help` and a bad word."""
    for name in names:
        sub.add_parser(name, help=SUMMARIES[name], add_help=False)


def add_examples(parser: argparse.ArgumentParser, sub: Any) -> None:
    """Open the top-level help and each command's help with its examples."""
    _lead_with_examples(parser, EXAMPLES[""])
    for name, command in sub.choices.items():
        if name in EXAMPLES:
            _lead_with_examples(command, EXAMPLES[name])


def _lead_with_examples(parser: argparse.ArgumentParser, examples: tuple[str, ...]) -> None:
    lines = "\n".join(f"  {example}" for example in examples)
    rest = (parser.description or "").strip()
    parser.description = f"examples:\n{lines}" + (f"\n\n{rest}" if rest else "")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
