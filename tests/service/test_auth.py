"""Who may use the API: bearer tokens, the open health check, tokens on disk, unsafe binds."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from corral.orchestrator.cli import main
from corral.orchestrator.service import ServiceOptionsError, check_bind, resolve_token

from ._harness import open_service, reporter

pytestmark = pytest.mark.anyio


async def test_requests_without_the_right_token_get_401_and_only_healthz_is_open(
    tmp_path: Path,
) -> None:
    async with open_service(tmp_path, reporter) as service:
        missing = await service.http.get("/v1/runs", headers={"Authorization": ""})
        wrong = await service.http.get("/v1/runs", headers={"Authorization": "Bearer nope"})
        events = await service.http.get(
            "/v1/runs/x/events", headers={"Authorization": "Bearer nope"}
        )
        health = await service.http.get("/healthz", headers={"Authorization": ""})
        allowed = await service.http.get("/v1/runs")
        openapi = (await service.http.get("/openapi.json")).json()
    for response in (missing, wrong, events):
        assert response.status_code == 401
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
        assert "nope" not in response.text
    assert health.status_code == 200 and health.json() == {"status": "ok"}
    assert allowed.status_code == 200 and allowed.json()["runs"] == []
    assert "/v1/runs/{run_id}/events" in openapi["paths"]
    fanout = openapi["components"]["schemas"]["FanoutRequest"]
    assert {"items", "template", "schema"} <= set(fanout["required"])


async def test_invalid_or_oversized_run_requests_are_refused_with_the_reason(
    tmp_path: Path,
) -> None:
    async with open_service(tmp_path, reporter) as service:
        no_template = service.fanout(1)
        del no_template["template"]
        invalid = await service.http.post("/v1/runs", json=no_template)
        unknown = await service.http.post("/v1/runs", json={"kind": "deploy"})
        huge = await service.http.post("/v1/runs", json=service.fanout(1, pad="x" * 2_000_000))
        bad_template = await service.http.post(
            "/v1/runs", json=service.fanout(1, template="Item {missing}")
        )
    assert invalid.status_code == 422
    assert [e["loc"] for e in invalid.json()["errors"]] == [["fanout", "template"]]
    assert unknown.status_code == 422
    assert huge.status_code == 413
    assert bad_template.status_code == 422 and "missing" in bad_template.json()["error"]


def test_a_generated_token_is_kept_private_on_disk_and_reused(tmp_path: Path) -> None:
    first = resolve_token({}, tmp_path)
    again = resolve_token({}, tmp_path)
    path = tmp_path / "api-token"
    assert first.generated_at == path and not first.configured
    assert again.value == first.value and again.configured and again.generated_at is None
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert resolve_token({"CORRAL_API_TOKEN": "from-env"}, tmp_path).value == "from-env"


def test_binding_beyond_loopback_needs_a_configured_token(tmp_path: Path) -> None:
    generated = resolve_token({}, tmp_path)
    check_bind("127.0.0.1", generated)
    with pytest.raises(ServiceOptionsError, match="without a configured API token"):
        check_bind("0.0.0.0", generated)
    check_bind("0.0.0.0", resolve_token({"CORRAL_API_TOKEN": "set"}, tmp_path))


def test_corral_serve_on_a_public_address_without_a_token_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("CORRAL_API_TOKEN", raising=False)
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    assert main(["serve", "--host", "0.0.0.0", "--port", "0"]) == 2
    assert "refusing to listen on 0.0.0.0" in capsys.readouterr().err
