"""The built wheel stands alone: installed into a fresh venv beside the OpenAI Agents SDK, both
work, and corral runs from it without the repository or `shared/`.

The venv is fresh and both wheels are installed into its own site-packages (where the two once
overwrote each other's `agents/`), the SDK with its dependencies from the wheels that
scripts/bootstrap downloads; corral's own dependencies are borrowed read-only from the development
venv through a path file, so the test runs offline and in seconds.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
WHEELHOUSE = REPO / ".venv" / "wheelhouse"
SOURCES = (
    "pyproject.toml",
    "README.md",
    "corral",
    "agents",
    "tools",
    "orchestrator",
    "observability",
)
DEADLINE = 120
PACKAGE_DATA = (
    "corral/agents/prompts/base/default/general.md",
    "corral/orchestrator/demo/data/issues.json",
    "corral/orchestrator/pipelines/triage/triage.schema.json",
    "corral/orchestrator/service/dashboard/index.html",
    "corral/orchestrator/service/dashboard/signin.html",
    "corral/orchestrator/service/dashboard/dashboard.js",
    "corral/orchestrator/service/dashboard/dashboard.css",
    "corral/orchestrator/services/minilm_query_adapter.npz",
)
SUM_AGENT = Path(__file__).with_name("_sum_agent.py")


def run(*command: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=False,
    )
    assert done.returncode == 0, (
        f"{command} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    )
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """corral's wheel, built from a copy of the sources (the checkout stays untouched)."""
    root = tmp_path_factory.mktemp("build")
    source = root / "src"
    source.mkdir()
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, source / name, symlinks=True, ignore=_build_junk)
        else:
            shutil.copy2(REPO / name, source / name)
    pip = (sys.executable, "-m", "pip", "--disable-pip-version-check")
    run(
        *pip,
        "wheel",
        "-q",
        "--no-deps",
        "--no-build-isolation",
        "-w",
        root / "dist",
        source,
        cwd=root,
    )
    (built,) = (root / "dist").glob("corral-*.whl")
    return built


def _build_junk(folder: str, names: list[str]) -> list[str]:
    del folder
    return [
        name for name in names if name in ("__pycache__", "build") or name.endswith(".egg-info")
    ]


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with corral's wheel and the Agents SDK's in its own site-packages."""
    sdk = sorted(WHEELHOUSE.glob("*.whl"))  # the SDK and its dependencies, from scripts/bootstrap
    assert any(w.name.startswith("openai_agents-") for w in sdk), f"no SDK wheel in {WHEELHOUSE}"
    home = tmp_path_factory.mktemp("venv") / "fresh"
    run(sys.executable, "-m", "venv", "--without-pip", home, cwd=home.parent)
    python = home / "bin" / "python"
    pip = (sys.executable, "-m", "pip", "--disable-pip-version-check", "--python", python)
    run(*pip, "install", "-q", "--no-deps", "--no-index", wheel, *sdk, cwd=home.parent)
    site = Path(
        run(
            python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=home
        ).strip()
    )
    # Added after installing, so pip never mistakes the development venv's packages for its own.
    (site / "zz_borrowed_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return home


def clean_env(tmp: Path) -> dict[str, str]:
    keep = {
        k: v for k, v in os.environ.items() if not k.startswith(("CORRAL_", "OPENAI_", "PYTHON"))
    }
    return {**keep, "CORRAL_HOME": str(tmp / "home")}


def test_the_wheel_installs_only_the_corral_namespace(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/", 1)[0] for name in archive.namelist()}
        names = archive.namelist()
    assert {top for top in tops if not top.endswith(".dist-info")} == {"corral"}
    for data in PACKAGE_DATA:
        assert data in names, f"{data} is not in the wheel"


def test_the_agents_sdk_and_corral_work_side_by_side(venv: Path, tmp_path: Path) -> None:
    python = venv / "bin" / "python"
    code = (
        "import agents, corral; from agents import Agent, Runner; "
        "print(agents.__file__, corral.__file__)"
    )
    where = run(python, "-c", code, cwd=tmp_path, env=clean_env(tmp_path)).split()
    assert all(path.startswith(str(venv)) for path in where), where
    assert run(venv / "bin" / "corral", "--version", cwd=tmp_path).strip() == "corral 0.1.0"
    assert run(python, "-m", "corral", "--version", cwd=tmp_path).strip() == "corral 0.1.0"


def test_the_installed_demo_runs_outside_the_repository(venv: Path, tmp_path: Path) -> None:
    out = tmp_path / "demo"
    said = run(venv / "bin" / "corral", "demo", "--out", out, cwd=tmp_path, env=clean_env(tmp_path))
    assert "duplicates" in said
    assert (out / "review").is_dir() and (out / "triage").is_dir()


def test_the_installed_package_runs_agents_with_the_callers_own_tools(
    venv: Path, tmp_path: Path
) -> None:
    script = tmp_path / "sum_agent.py"
    shutil.copy2(SUM_AGENT, script)
    said = run(venv / "bin" / "python", script, cwd=tmp_path, env=clean_env(tmp_path))
    assert json.loads(said) == ["the sum is 5", "the sum is 5"]
