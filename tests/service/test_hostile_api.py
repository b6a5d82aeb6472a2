"""A holder of the API token attacks the server: each request asks for more than the default
`[service]` allow-lists give, in every run kind, and must get a 422 naming the rule.

Also the service's edges as an attacker (or a crowd) finds them: a flood of concurrent
submissions, a reused `Idempotency-Key`, a stream of a run another process executes, and a
public bind without a token.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import ItemRecord, RunRecord, open_sqlite_store
from corral.orchestrator.cli import main
from corral.orchestrator.service import ServiceLimits
from tests._journal import agent_record

from ..e2e import test_triage as triage_e2e
from ._harness import WAIT, Gate, Harness, open_service, reporter
from .test_pipelines import LABELS, PATCH

pytestmark = [pytest.mark.hostile, pytest.mark.anyio]

KINDS = ("exec", "fanout", "review", "refactor", "triage")


def request_of(service: Harness, kind: str, **fields: Any) -> dict[str, Any]:
    """A request of `kind` the server would accept, with `fields` on top."""
    base = {"base_url": service.model_url, "cd": str(service.cwd)}
    bodies: dict[str, dict[str, Any]] = {
        "exec": {"kind": "exec", "task": "say hi"},
        "fanout": service.fanout(1),
        "review": {"kind": "review", "patch": PATCH},
        "refactor": {"kind": "refactor", "repo": str(service.cwd), "instruction": "tidy"},
        "triage": {"kind": "triage", "issues": triage_e2e.ISSUES, "labels": LABELS},
    }
    return {**base, **bodies[kind], **fields}


async def refusals(service: Harness, **fields: Any) -> dict[str, tuple[int, str]]:
    """What the server answers to the attack `fields` in each run kind."""
    answers: dict[str, tuple[int, str]] = {}
    for kind in KINDS:
        answer = await service.http.post("/v1/runs", json=request_of(service, kind, **fields))
        answers[kind] = (answer.status_code, answer.text)
    return answers


def assert_refused(answers: dict[str, tuple[int, str]], rule: str) -> None:
    for kind, (status, text) in answers.items():
        assert status == 422, (kind, status, text)
        assert rule in text, (kind, text)


@pytest.mark.parametrize(
    "base_url",
    ["https://evil.example/v1", "http://127.0.0.1:1/v1", "https://api.openai.com.evil.example/v1"],
)
async def test_a_request_cannot_send_the_servers_key_to_an_endpoint_of_its_choosing(
    tmp_path: Path, base_url: str
) -> None:
    async with open_service(tmp_path, reporter) as service:
        answers = await refusals(service, base_url=base_url)
    assert_refused(answers, "is not in [service] allowed_base_urls")


@pytest.mark.parametrize(
    ("base_url", "problem"),
    [
        ("file:///etc/passwd", "scheme 'file'"),
        ("data:text/plain,hello", "scheme 'data'"),
        ("ftp://evil.example/v1", "scheme 'ftp'"),
        ("javascript:alert(1)", "scheme 'javascript'"),
        ("//evil.example/v1", "no scheme"),
        ("https:///v1", "no host"),
        ("http://user:secret@evil.example/v1", "carries credentials"),
        ("http://evil.example\\@127.0.0.1/v1", "'\\\\'"),
        ("http://evil.example/v1?redirect=1", "query or fragment"),
        ("http://evil.example:99999/v1", "invalid port"),
        ("http://evil example/v1", "spaces"),
        ("http://evil_example!/v1", "invalid host name"),
    ],
)
async def test_a_malformed_base_url_is_refused_at_submission_saying_what_is_wrong(
    tmp_path: Path, base_url: str, problem: str
) -> None:
    async with open_service(tmp_path, reporter) as service:
        answers = await refusals(service, base_url=base_url)
    assert_refused(answers, problem)
    assert_refused(answers, "expected an http(s) endpoint" if "cred" not in problem else "key")


async def test_a_request_cannot_pick_full_access(tmp_path: Path) -> None:
    async with open_service(tmp_path, reporter) as service:
        answers = await refusals(service, sandbox="full-access")
    assert_refused(answers, "sandbox full-access is wider than [service] max_sandbox")


@pytest.mark.parametrize(
    "cd", ["/", "~", "/etc", "..", "link-to-root", "home", "home/blobs", "loop", "nul\x00byte"]
)
async def test_a_request_cannot_run_in_a_folder_outside_the_allowed_roots(
    tmp_path: Path, cd: str
) -> None:
    (tmp_path / "link-to-root").symlink_to("/")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    folder = cd if cd.startswith(("/", "~")) else f"{tmp_path}/{cd}"
    async with open_service(tmp_path, reporter) as service:
        answers = await refusals(service, cd=folder)
    rules = {"home": "inside corral's home", "loop": "not a usable path", "nul": "not a usable"}
    rule = next((r for start, r in rules.items() if cd.startswith(start)), "allowed_roots")
    assert_refused(answers, rule)


@pytest.mark.parametrize("kind", ["review", "refactor", "triage"])
async def test_a_pipeline_cannot_name_a_repository_outside_the_allowed_roots(
    tmp_path: Path, kind: str
) -> None:
    async with open_service(tmp_path, reporter) as service:
        request = request_of(service, kind, repo="/")
        answer = await service.http.post("/v1/runs", json=request)
    assert answer.status_code == 422
    assert "repo / is not in [service] allowed_roots" in answer.json()["error"]


OVERRIDES = [
    ('sandbox_mode="full-access"', "wider than [service] max_sandbox"),
    ('sandbox_mode="danger-full-access"', "wider than [service] max_sandbox"),
    ('agents.roles.x={description="x", sandbox_mode="full-access"}', "max_sandbox"),
    ('approval_policy="on-request"', "approve commands outside the sandbox"),
    ("network_access=true", "allow_network is off"),
    ("sandbox_workspace_write.network_access=true", "allow_network is off"),
    ('writable_roots=["/"]', "writable root / is not in [service] allowed_roots"),
    ('sandbox_workspace_write={writable_roots=["/etc"]}', "is not in [service] allowed_roots"),
    ('writable_roots=["home"]', "inside corral's home"),
    ('mcp_servers.x.command="true"', "allow_mcp_overrides is off"),
    ('mcp_servers={x={command="true", args=["-c", "id"]}}', "allow_mcp_overrides is off"),
    ('"mcp_servers".x.url="http://evil.example/mcp"', "allow_mcp_overrides is off"),
    ('base_url="https://evil.example/v1"', "is not in [service] allowed_base_urls"),
    ('base_url="file:///etc/passwd"', "scheme 'file'"),
    ('model_api_key_env="HOME"', "model_api_key_env is refused"),
    ('otel={exporter="otlp", endpoint="https://evil.example"}', "it sends telemetry"),
    ('service.max_sandbox="full-access"', "service.max_sandbox is refused"),
    ('temporal.address="evil.example:7233"', "temporal.address is refused"),
    ('executor="temporal"', "executor is refused"),
    ('model_instructions_file="/etc/passwd"', "model_instructions_file is refused"),
    ('model_instructions_file="/no/such/file"', "model_instructions_file is refused"),
    ('skills.dirs=["/root"]', "skills.dirs is refused"),
    ('agents.roles.x.instructions_file="/etc/hostname"', "instructions_file is refused"),
]


@pytest.mark.parametrize(("setting", "rule"), OVERRIDES)
async def test_a_config_override_cannot_widen_what_the_server_allows(
    tmp_path: Path, setting: str, rule: str
) -> None:
    setting = setting.replace('"home"', f'"{tmp_path / "home"}"')
    async with open_service(tmp_path, reporter) as service:
        # No base_url field: it would win over a `-c base_url`, as `--base-url` does in the CLI.
        answers = await refusals(service, config=[setting], base_url=None)
    assert_refused(answers, rule)


async def test_sixty_concurrent_submissions_admit_exactly_what_the_queue_holds(
    tmp_path: Path,
) -> None:
    gate = Gate()
    limits = ServiceLimits(max_running=4, max_queued=16)
    async with open_service(tmp_path, gate, limits) as service:
        statuses: list[int] = []

        async def submit() -> None:
            answer = await service.http.post("/v1/runs", json=service.fanout(1))
            statuses.append(answer.status_code)

        try:
            with anyio.fail_after(WAIT):
                async with anyio.create_task_group() as tg:
                    for _ in range(60):
                        tg.start_soon(submit)
        finally:
            gate.release()
    assert sorted(statuses) == [202] * 20 + [429] * 40


@pytest.mark.parametrize("kind", KINDS)
async def test_an_idempotency_key_reused_with_another_request_is_refused(
    tmp_path: Path, kind: str
) -> None:
    async with open_service(tmp_path, lambda request: "done") as service:
        first = request_of(service, kind)
        headers = {"Idempotency-Key": f"key-{kind}"}
        created = await service.http.post("/v1/runs", json=first, headers=headers)
        again = await service.http.post("/v1/runs", json=first, headers=headers)
        other = await service.http.post(
            "/v1/runs", json={**first, "model": "another-model"}, headers=headers
        )
    assert created.status_code == again.status_code == 202
    assert again.json()["id"] == created.json()["id"]
    assert other.status_code == 422
    assert "was used for a different request" in other.json()["error"]


async def test_an_idempotency_key_keeps_its_request_across_a_restart(tmp_path: Path) -> None:
    headers = {"Idempotency-Key": "across-restarts"}
    async with open_service(tmp_path, reporter) as service:
        created = await service.http.post("/v1/runs", json=own_model(service, 1), headers=headers)
    async with open_service(tmp_path, reporter) as service:
        same = await service.http.post("/v1/runs", json=own_model(service, 1), headers=headers)
        other = await service.http.post("/v1/runs", json=own_model(service, 2), headers=headers)
    assert same.status_code == 202 and same.json()["id"] == created.json()["id"]
    assert other.status_code == 422


def own_model(service: Harness, count: int) -> dict[str, Any]:
    """A fan-out on the server's own endpoint (each test server's scripted model differs)."""
    request = service.fanout(count)
    del request["base_url"]
    return request


async def test_a_run_another_process_executes_streams_live_and_then_answers_204(
    tmp_path: Path,
) -> None:
    run_id = "elsewhere"
    async with (
        open_service(tmp_path, reporter) as service,
        open_sqlite_store(service.home / "journal.sqlite") as writer,
    ):
        record = RunRecord(
            run_id=run_id, kind="exec", status="running", created_at=0, updated_at=0, config={}
        )
        await writer.create_run(record)
        await writer.create_agent(agent_record("a1", run_id))
        await writer.append_event("a1", "note", {"n": 1}, at=0)
        seen: list[str] = []
        url = f"/v1/runs/{run_id}/events"
        with anyio.fail_after(WAIT):
            async with service.http.stream("GET", url, timeout=None) as response:
                async for line in response.aiter_lines():
                    if line.startswith("data: ") and '"n"' in line:
                        seen.append(line)
                        if len(seen) == 1:  # the client reads while the other writer goes on
                            await writer.append_event("a1", "note", {"n": 2}, at=1)
                        else:
                            await writer.update_run(run_id, status="done", updated_at=1)
                    if line.startswith("event: end"):
                        seen.append(line)
        after_end = await service.http.get(url, headers={"Last-Event-ID": "2"})
    assert len(seen) == 3 and seen[-1] == "event: end"
    assert '"n":2' in seen[1]
    assert after_end.status_code == 204


@pytest.mark.parametrize("folder", ["/", "~", "home"])
async def test_a_retry_cannot_run_a_journaled_fanout_outside_the_allowed_roots(
    tmp_path: Path, folder: str
) -> None:
    run_id = "from-the-cli"
    cwd = str(tmp_path / folder) if folder == "home" else folder
    settings = {
        "template": "Item {n}",
        "result_schema": {"type": "object"},
        "concurrency": 1,
        "max_result_tries": 1,
        "cwd": cwd,
        "sandbox": "workspace-write",
        "worker": {},
    }
    async with (
        open_service(tmp_path, reporter) as service,
        open_sqlite_store(service.home / "journal.sqlite") as writer,
    ):
        await writer.create_run(
            RunRecord(
                run_id=run_id,
                kind="fanout",
                status="failed",
                created_at=0,
                updated_at=0,
                config=settings,
            )
        )
        await writer.put_items(run_id, [ItemRecord(run_id=run_id, index=0, input={"n": 1})])
        answer = await service.http.post(f"/v1/runs/{run_id}/retry")
    rule = "inside corral's home" if folder == "home" else "is not in [service] allowed_roots"
    assert answer.status_code == 422
    assert answer.json()["error"].startswith("cd ") and rule in answer.json()["error"]


@pytest.mark.parametrize("host", ["::", "0.0.0.0", "192.0.2.10"])
def test_a_public_bind_without_a_token_is_refused_every_time_and_writes_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    host: str,
) -> None:
    home = tmp_path / "home"
    monkeypatch.delenv("CORRAL_API_TOKEN", raising=False)
    monkeypatch.setenv("CORRAL_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    codes = [main(["serve", "--host", host, "--port", "0"]) for _ in range(2)]
    errors = capsys.readouterr().err.strip().splitlines()
    assert codes == [2, 2]
    assert len(errors) == 2
    assert all(f"refusing to listen on {host} without a configured API token" in e for e in errors)
    assert not (home / "api-token").exists()
    assert not home.exists()
