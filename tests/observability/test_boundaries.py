"""`agents/` and `tools/` stay free of OpenTelemetry: observability plugs in from outside."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_agents_and_tools_never_import_opentelemetry_or_observability() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}: {name}"
        for package in ("agents", "tools")
        for path in sorted((ROOT / package).rglob("*.py"))
        for name in imported_modules(path)
        if name.split(".")[0] in {"opentelemetry", "observability"}
    ]
    assert offenders == []
    assert len(list((ROOT / "agents").rglob("*.py"))) > 10
