"""House rules the code keeps, checked over the package's source (not its behaviour).

No function takes more than `MAX_PARAMETERS` parameters (besides `self` and `cls`): past that, a
call is a relay of settings that belong in one typed object (a job, a setup, an options record).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("agents", "tools", "orchestrator", "observability", "corral")
MAX_PARAMETERS = 8


def package_files() -> list[Path]:
    files: list[Path] = []
    for package in PACKAGES:
        folder = ROOT / package
        # `corral/` holds symlinks to the other packages: only its own files count there.
        found = folder.glob("*.py") if package == "corral" else folder.rglob("*.py")
        files.extend(sorted(found))
    return files


def parameter_count(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    args = function.args
    named = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    if named and named[0].arg in ("self", "cls"):
        named = named[1:]
    return len(named) + (args.vararg is not None) + (args.kwarg is not None)


def offenders(source: str, where: str) -> list[str]:
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            count = parameter_count(node)
            if count > MAX_PARAMETERS:
                found.append(f"{where}:{node.lineno} {node.name} takes {count} parameters")
    return sorted(found, key=lambda line: int(line.split(":")[1].split()[0]))


def test_no_function_in_package_code_takes_more_than_eight_parameters() -> None:
    files = package_files()
    assert len(files) > 100, "the package's source was not found"
    found = [
        line
        for path in files
        for line in offenders(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    ]
    assert not found, (
        f"over {MAX_PARAMETERS} parameters; bundle them in a typed object:\n" + "\n".join(found)
    )


def test_the_check_counts_keyword_parameters_and_skips_self() -> None:
    source = (
        "class A:\n"
        "    def ok(self, a, b, c, d, e, f, g, h): ...\n"
        "    def wide(self, a, b, c, d, e, *, f, g, h, i): ...\n"
        "async def relay(a, *rest, b, c, d, e, f, g, **more): ...\n"
    )
    assert offenders(source, "x.py") == [
        "x.py:3 wide takes 9 parameters",
        "x.py:4 relay takes 9 parameters",
    ]
