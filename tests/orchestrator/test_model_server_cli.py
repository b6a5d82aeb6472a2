"""`corral model-server` as a user runs it: a real subprocess, its output and its exit code."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

import anyio
import openai
import pytest
from anyio.abc import ByteReceiveStream
from anyio.streams.buffered import BufferedByteReceiveStream

DEADLINE = 30.0
POLICY = 'def answer(request):\n    return "hello from the cli policy"\n'


async def corral(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    with anyio.fail_after(DEADLINE):
        return await anyio.run_process(
            [sys.executable, "-m", "corral", *args], cwd=cwd, check=False
        )


async def read_all(stream: ByteReceiveStream | None) -> str:
    assert stream is not None
    chunks = []
    with anyio.fail_after(DEADLINE):
        async for chunk in stream:
            chunks.append(chunk)
    return b"".join(chunks).decode()


@pytest.mark.anyio
async def test_server_prints_its_url_answers_and_exits_zero_on_ctrl_c(tmp_path: Path) -> None:
    (tmp_path / "policy.py").write_text(POLICY, encoding="utf-8")
    command = [sys.executable, "-m", "corral", "model-server", "--policy", "policy.py:answer"]
    async with await anyio.open_process(command, cwd=tmp_path) as process:
        assert process.stdout is not None
        with anyio.fail_after(DEADLINE):
            line = (
                await BufferedByteReceiveStream(process.stdout).receive_until(b"\n", 1000)
            ).decode()
        prefix = "corral model-server: listening on "
        assert line.startswith(prefix)
        base_url = line.removeprefix(prefix)
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        async with openai.AsyncOpenAI(
            base_url=base_url, api_key="x", max_retries=0, timeout=DEADLINE
        ) as client:
            response = await client.responses.create(model="m", input="hi")
        process.send_signal(signal.SIGINT)
        with anyio.fail_after(DEADLINE):
            code = await process.wait()
        errors = await read_all(process.stderr)
    assert response.output_text == "hello from the cli policy"
    assert code == 0
    assert "Traceback" not in errors


@pytest.mark.anyio
async def test_unknown_flag_exits_2_with_usage(tmp_path: Path) -> None:
    result = await corral("model-server", "--policy", "p.py:f", "--no-such-flag", cwd=tmp_path)
    assert result.returncode == 2
    assert b"usage:" in result.stderr
    assert b"--no-such-flag" in result.stderr


@pytest.mark.anyio
async def test_missing_policy_file_is_a_clear_error(tmp_path: Path) -> None:
    result = await corral("model-server", "--policy", "missing.py:answer", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.decode().startswith(
        "corral model-server: error: policy file missing.py does not exist"
    )
    assert b"Traceback" not in result.stderr


@pytest.mark.anyio
async def test_policy_naming_a_missing_function_lists_the_functions_there(tmp_path: Path) -> None:
    (tmp_path / "policy.py").write_text(POLICY, encoding="utf-8")
    result = await corral("model-server", "--policy", "policy.py:anwser", cwd=tmp_path)
    assert result.returncode == 2
    assert "policy.py has no function 'anwser' (it defines: answer)" in result.stderr.decode()
    assert b"Traceback" not in result.stderr


@pytest.mark.anyio
async def test_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "policy.py").write_text(POLICY, encoding="utf-8")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = await corral(
            "model-server", "--policy", "policy.py:answer", "--port", str(port), cwd=tmp_path
        )
    assert result.returncode == 2
    assert (
        f"port {port} on 127.0.0.1 is already in use; choose another with --port"
        in result.stderr.decode()
    )
    assert b"Traceback" not in result.stderr
